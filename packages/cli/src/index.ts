// The public API of @airlock/cli: the command line as a function, for embedding and tests.
export { main, MAIN_HELP } from './main.js';
export { UsageError } from './support/usage-error.js';
