#!/usr/bin/env -S node --no-node-snapshot
// The installed `airlock` command. A committed file, so package managers can link the
// binary before `dist/` is built (no "Failed to create bin" on a fresh install).
import '../dist/bin.js';
