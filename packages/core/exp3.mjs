import { RE2JS } from 're2js';
const s = 'abcdefghijklmnopqrstuvwxyz'.repeat(4000);
for (let round = 0; round < 3; round++)
for (const p of ['^[a-z0-9-]+$', '[a-q][^u-z]{13}x', '(a|b|c)*d', '^(a+)+$', '^[a-z]+@[a-z]+$', '(x+x+)+y']) {
  const c = RE2JS.compile(p);
  let t = performance.now(); for (let i = 0; i < 5; i++) c.test(s); if (round === 2) console.log(p, ((performance.now() - t) / 5).toFixed(2), 'ms', c.re2Input.prog.inst.length);
}
let t = performance.now(); for (let i = 0; i < 5; i++) /^[a-z0-9-]+$/.test(s); console.log('v8', ((performance.now() - t) / 5).toFixed(2));
