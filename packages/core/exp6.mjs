import { compileLinear } from './dist/validation/linear-regexp.js';
import { RE2JS } from 're2js';
const r = compileLinear('^(a+)+$');
console.log(r.test('aaa!'), r.test('aaa'), RE2JS.translateRegExp('^(a+)+$'));
const b = compileLinear('^(b+)+$'); console.log(b.test('s'), b.test('bbb'));
