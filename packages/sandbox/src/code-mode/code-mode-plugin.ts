// The name Code Mode's own plugin runs under.

/** Not a name a manifest can take (no `:` there), so no plugin shares its isolates, quarantine or queue. */
export const CODE_MODE_PLUGIN = 'airlock:code-mode';
