// RFC 8785 (JCS) for the JSON the daemon asks us to sign: strings, integers, booleans, null,
// arrays and objects. Lets the page check that the digest it signs is the digest of the payload it
// shows, so a daemon cannot get a signature over something the approver never saw.

export function jcs(value) {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('JCS: not a finite number');
    return JSON.stringify(value); // ECMAScript number serialization is JCS's
  }
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  // Keys sorted by UTF-16 code units: JavaScript's default string order.
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs(value[k])}`).join(',')}}`;
}

export async function sha256Hex(text) {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
