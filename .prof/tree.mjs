// top-down tree under nodes whose key matches argv[3], merged by key, depth-limited
import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const re = new RegExp(process.argv[3]); const maxDepth = Number(process.argv[4] ?? 4); const minMs = Number(process.argv[5] ?? 5);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const key = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*\/(dist|node_modules)\//, '$1/').replace(/^node:internal\//,'')}:${n.callFrame.lineNumber}`;
const totalOf = new Map();
const tot = (id) => { if (totalOf.has(id)) return totalOf.get(id); const n = byId.get(id); let t = self.get(id) ?? 0; for (const c of n.children ?? []) t += tot(c); totalOf.set(id, t); return t; };
// merged tree
const root = { kids: new Map(), t: 0 };
function add(id, node, depth) { const n = byId.get(id); node.t += tot(id); if (depth >= maxDepth) return; for (const c of n.children ?? []) { const k = key(byId.get(c)); if (!node.kids.has(k)) node.kids.set(k, { kids: new Map(), t: 0 }); add(c, node.kids.get(k), depth + 1); } }
function find(id, inside) { const n = byId.get(id); const m = re.test(key(n)); if (m && !inside) { add(id, root, 0); return; } for (const c of n.children ?? []) find(c, inside); }
find(p.nodes[0].id, false);
function pr(node, name, ind) { if (node.t / 1000 < minMs) return; console.log(`${(node.t / 1000).toFixed(0).padStart(6)} ms ${' '.repeat(ind)}${name}`); for (const [k, c] of [...node.kids].sort((a, b) => b[1].t - a[1].t)) pr(c, k, ind + 2); }
pr(root, process.argv[3], 0);
