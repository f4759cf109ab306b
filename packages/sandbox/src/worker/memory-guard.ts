// A sandbox process's memory ceiling, kept from each pool worker's side. The parent kills the
// process when its resident memory passes the ceiling, and every call in flight goes with
// it: memory one tenant parked in its warm realms between calls (legal within its
// `memoryMb`, but one per thread and per tenant) once ended a neighbour's call so. Before
// that happens, each worker disposes its largest idle tenant isolates: the tenant holding
// the memory pays a cold start, and the neighbours' calls go on.
import type { IsolateRunner } from '../isolate/isolate-runner.js';
import { sampledResidentBytes } from '../isolate/watchdog.js';

const MIB = 1024 * 1024;
/** Past this share of the ceiling, idle isolates are evicted. */
const PRESSURE_SHARE = 0.75;
/** Below this share (as last sampled) a task's end reads nothing: the common case costs no /proc read. */
const WATCH_SHARE = 0.5;
/** How often an idle worker looks, for memory another worker's tasks made. */
const LOOK_EVERY_MS = 100;
/**
 * How often it looks, reading the resident size afresh, while the process is past the watch
 * share: a call can grow its isolate by 80 MiB between two samples 100 ms apart, and two such
 * calls at once once took a process past the mark that retires it (90%) before either
 * worker evicted. Looking closer, not ahead: making room for what a call's `memoryMb` might
 * take let any tenant evict its neighbours by declaring 512 MiB (an outside attacker's find).
 */
const CLOSE_LOOK_EVERY_MS = 20;
/**
 * Growth past the size at the last relief before the next one. The allocator keeps much of
 * what an evicted isolate freed and hands it out again, so the resident size may not drop:
 * evicting again at the same size would empty every tenant's isolates for nothing.
 */
const REGROWTH_BYTES = 16 * MIB;

export class MemoryGuard {
  readonly #runner: IsolateRunner;
  readonly #pressureBytes: number;
  readonly #watchBytes: number;
  /** The resident size at the last relief, while the process stays over the mark. */
  #lastRelief: number | undefined;
  /** The close look, while the process is past the watch share. */
  #closeLook: ReturnType<typeof setInterval> | undefined;

  constructor(runner: IsolateRunner, ceilingMb: number) {
    this.#runner = runner;
    this.#pressureBytes = PRESSURE_SHARE * ceilingMb * MIB;
    this.#watchBytes = WATCH_SHARE * ceilingMb * MIB;
    setInterval(() => this.#look(sampledResidentBytes()), LOOK_EVERY_MS).unref();
  }

  /**
   * After a task, whose realm may now park what it allocated: the resident size is read
   * fresh (tens of µs, from /proc) only when the process was already half full or the
   * task's isolate holds a lot, so a warm call pays nothing here.
   */
  afterTask(): void {
    if (sampledResidentBytes() < this.#watchBytes && !this.#runner.lastTaskHeldMuch()) return;
    this.#look(process.memoryUsage.rss());
  }

  #look(residentBytes: number): void {
    if (residentBytes >= this.#watchBytes) this.#lookClosely();
    if (residentBytes < this.#pressureBytes) {
      this.#lastRelief = undefined;
      return;
    }
    if (this.#lastRelief !== undefined && residentBytes <= this.#lastRelief + REGROWTH_BYTES) return;
    // What is over the mark (or what grew since the last relief, whose freed memory the
    // allocator may still hold), and some room.
    const over = residentBytes - (this.#lastRelief ?? this.#pressureBytes);
    this.#runner.relieveMemory(over + REGROWTH_BYTES);
    this.#lastRelief = residentBytes;
  }

  #lookClosely(): void {
    if (this.#closeLook !== undefined) return;
    this.#closeLook = setInterval(() => {
      const residentBytes = process.memoryUsage.rss();
      if (residentBytes < this.#watchBytes) {
        clearInterval(this.#closeLook);
        this.#closeLook = undefined;
      }
      this.#look(residentBytes);
    }, CLOSE_LOOK_EVERY_MS);
    this.#closeLook.unref();
  }
}
