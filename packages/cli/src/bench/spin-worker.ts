// Raw Piscina baseline for CPU-bound work: the same loop the bench plugin runs in its isolate.
export default function spin(iterations: number): number {
  let x = 0;
  for (let i = 0; i < iterations; i += 1) x = (x * 31 + i) | 0;
  return x;
}
