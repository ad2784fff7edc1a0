import { compareUtf8 } from '../canon/index.js';
import { classifyRefsDrift } from './drift.js';
import { openPackView, viewRefs, type PackView } from './read-side.js';
import { PACK_CREATED_AT, PACK_DIFF_SCHEMA, type PackDiff, type PackDiffSummary } from './types.js';

/**
 * `pack diff` (§3): compares declared file hashes and manifests, and classifies context drift for
 * run packs (Ward decision 7: run identity is blanked before classifying). Nothing is verified.
 */
export function diffPacks(leftBytes: Uint8Array, rightBytes: Uint8Array): PackDiff {
  return diffViews(openPackView(leftBytes), openPackView(rightBytes));
}

export function diffViews(left: PackView, right: PackView): PackDiff {
  const added = [...right.files.keys()].filter((p) => !left.files.has(p)).sort(compareUtf8);
  const removed = [...left.files.keys()].filter((p) => !right.files.has(p)).sort(compareUtf8);
  const changedFiles = [...left.files.keys()].filter((p) => right.files.has(p) && right.files.get(p) !== left.files.get(p)).sort(compareUtf8);
  const manifestDelta = left.manifestDigest !== right.manifestDigest || left.packType !== right.packType;

  const summary: PackDiffSummary = { changed: false, manifest_delta: manifestDelta, context_drift_classification: 'none' };
  if (left.packType === 'run' && right.packType === 'run') {
    const leftRefs = viewRefs(left);
    const rightRefs = viewRefs(right);
    if (leftRefs && rightRefs) {
      const drift = classifyRefsDrift(leftRefs, rightRefs);
      summary.context_drift_classification = drift.classification;
      if (drift.changed) summary.context_changed = true;
      if (drift.runtimeOnly) summary.context_runtime_only_changes = true;
    } else {
      const l = payloadContext(left);
      const r = payloadContext(right);
      if ((l.digest || l.count > 0 || r.digest || r.count > 0) && (l.digest !== r.digest || l.mode !== r.mode || l.count !== r.count)) {
        summary.context_drift_classification = 'semantic';
        summary.context_changed = true;
      }
    }
  }
  if (added.length > 0) summary.added_files = added;
  if (removed.length > 0) summary.removed_files = removed;
  if (changedFiles.length > 0) summary.changed_files = changedFiles;
  summary.changed = manifestDelta || added.length > 0 || removed.length > 0 || changedFiles.length > 0 || summary.context_changed === true;
  return {
    schema_id: PACK_DIFF_SCHEMA.id,
    schema_version: PACK_DIFF_SCHEMA.version,
    created_at: PACK_CREATED_AT,
    left_pack_id: left.packId,
    right_pack_id: right.packId,
    left_pack_type: left.packType,
    right_pack_type: right.packType,
    summary,
  };
}

function payloadContext(view: PackView): { digest: string; mode: string; count: number } {
  const p = view.runPayload;
  return { digest: p?.context_set_digest ?? '', mode: p?.context_evidence_mode ?? '', count: p?.context_ref_count ?? 0 };
}
