import { Ajv2020 } from 'ajv/dist/2020.js';
for (const n of [2000, 4000, 8000]) {
  const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => ['p' + i, { type: 'string', minLength: 1 }])) };
  for (const opts of [{ allErrors: true, verbose: true, strict: false }, { allErrors: true, verbose: true, strict: false, code: { optimize: false } }]) {
    const ajv = new Ajv2020(opts);
    const t = performance.now(); ajv.compile(wide); console.log(n, JSON.stringify(opts.code ?? {}), (performance.now() - t).toFixed(0), 'ms');
  }
}
