// Source evaluated in every fresh realm before any plugin code. It captures the
// intrinsics it needs (so a plugin that replaces JSON.stringify or Array.prototype
// gains nothing), removes what the manifest did not grant, and leaves one entry
// function that the host takes as a Reference and then deletes from the global.
// Results and thrown values are serialized to a string *here*, inside the isolate,
// so getters, Proxies and toJSON run under the call's CPU and wall-clock limits.
export const ENTRY_GLOBAL = '__airlock_entry';
/** Set by the host before the bootstrap runs, taken into its closure, then deleted. */
export const CAPABILITY_REFERENCE_GLOBAL = '__airlock_capability';
export const CAPABILITY_NAMES_GLOBAL = '__airlock_capability_names';

export const BOOTSTRAP_SOURCE = String.raw`
(function (grantWebAssembly, grantSharedArrayBuffer) {
  'use strict';
  const g = globalThis;
  const apply = Reflect.apply;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const isArray = Array.isArray;
  const charCodeAt = String.prototype.charCodeAt;
  const sliceString = String.prototype.slice;
  const defineProperty = Object.defineProperty;
  const MAX_MESSAGE = 2000;
  const MAX_DESCRIBE_BYTES = 4 * 1024 * 1024;

  if (!grantWebAssembly) delete g.WebAssembly;
  if (!grantSharedArrayBuffer) { delete g.SharedArrayBuffer; delete g.Atomics; }

  // The host's capability bridge: a Reference kept in this closure only. Plugin code
  // never sees it, just one plain function per granted name.
  const capabilityReference = g['${CAPABILITY_REFERENCE_GLOBAL}'];
  const capabilityNames = g['${CAPABILITY_NAMES_GLOBAL}'] || [];
  delete g['${CAPABILITY_REFERENCE_GLOBAL}'];
  delete g['${CAPABILITY_NAMES_GLOBAL}'];
  const referenceApply = capabilityReference ? capabilityReference.apply : undefined;
  const then = Promise.prototype.then;
  const freeze = Object.freeze;
  const createNull = Object.create;

  function stringifyArgument(argument) {
    const text = json(argument === undefined ? null : argument);
    if (typeof text !== 'string') throw new TypeError('not JSON');
    return text;
  }

  function capabilitiesObject() {
    const capabilities = createNull(null);
    for (let i = 0; i < capabilityNames.length; i += 1) {
      const name = capabilityNames[i];
      capabilities[name] = function (argument) {
        let json;
        try { json = stringifyArgument(argument); } catch (error) {
          return Promise.reject(new TypeError('capability ' + name + ' takes JSON'));
        }
        const pending = apply(referenceApply, capabilityReference, [undefined, [name, json], { result: { promise: true } }]);
        return apply(then, pending, [function (text) { return parse(text); }]);
      };
    }
    return freeze(capabilities);
  }

  function json(value) { return apply(stringify, undefined, [value]); }

  function utf8Length(text, stopAt) {
    let bytes = 0;
    for (let i = 0; i < text.length; i += 1) {
      const c = apply(charCodeAt, text, [i]);
      if (c < 0x80) bytes += 1;
      else if (c < 0x800) bytes += 2;
      else if (c >= 0xd800 && c <= 0xdbff) { bytes += 4; i += 1; }
      else bytes += 3;
      if (bytes > stopAt) return bytes;
    }
    return bytes;
  }

  function bounded(text) {
    return text.length > MAX_MESSAGE ? apply(sliceString, text, [0, MAX_MESSAGE]) + '… (truncated)' : text;
  }

  // Reads a thrown value's message without trusting it: getters and Proxies may throw or spin.
  function describeThrown(thrown) {
    try {
      if (typeof thrown === 'string') return bounded(thrown);
      if (thrown !== null && typeof thrown === 'object') {
        const message = thrown.message;
        if (typeof message === 'string') return bounded(message);
      }
      return 'a non-Error value was thrown';
    } catch (_) {
      return 'an unreadable error was thrown';
    }
  }

  function failure(code, message) { return json({ ok: false, code: code, message: message }); }

  function encode(value, maxBytes) {
    let text;
    try {
      text = json({ ok: true, value: value === undefined ? null : value });
    } catch (error) {
      return failure('INVALID_TOOL_OUTPUT', 'the result is not JSON (' + describeThrown(error) + ')');
    }
    if (typeof text !== 'string') return failure('INVALID_TOOL_OUTPUT', 'the result is not JSON');
    if (text.length > maxBytes / 3 && utf8Length(text, maxBytes) > maxBytes) {
      return failure('OUTPUT_TOO_LARGE', 'the result is larger than ' + maxBytes + ' bytes');
    }
    return text;
  }

  function toolsOf(namespace) {
    const plugin = namespace.default;
    const tools = plugin !== null && typeof plugin === 'object' ? plugin.tools : undefined;
    if (!isArray(tools)) throw new TypeError('the default export must be { tools: [...] }');
    return tools;
  }

  function find(namespace, name) {
    const tools = toolsOf(namespace);
    for (let i = 0; i < tools.length; i += 1) {
      const tool = tools[i];
      if (tool !== null && typeof tool === 'object' && tool.name === name) return tool;
    }
    return undefined;
  }

  function describe(namespace) {
    const tools = toolsOf(namespace);
    const out = [];
    for (let i = 0; i < tools.length; i += 1) {
      const tool = tools[i];
      if (tool === null || typeof tool !== 'object') { out[out.length] = { invalid: 'tools[' + i + '] is not an object' }; continue; }
      out[out.length] = {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        deferLoading: tool.deferLoading,
        output: tool.output,
        hasExecute: typeof tool.execute === 'function',
        hasClassifier: typeof tool.isConcurrencySafe === 'function',
      };
    }
    let text;
    try { text = json({ ok: true, value: out }); } catch (error) {
      return failure('INVALID_TOOL_OUTPUT', 'the tool list is not JSON (' + describeThrown(error) + ')');
    }
    if (utf8Length(text, MAX_DESCRIBE_BYTES) > MAX_DESCRIBE_BYTES) return failure('OUTPUT_TOO_LARGE', 'the tool list is too large');
    return text;
  }

  function classify(namespace, callsJson) {
    const calls = parse(callsJson);
    const verdicts = [];
    for (let i = 0; i < calls.length; i += 1) {
      let verdict = false;
      try {
        const tool = find(namespace, calls[i].tool);
        verdict = tool !== undefined && typeof tool.isConcurrencySafe === 'function' && tool.isConcurrencySafe(parse(calls[i].argsJson)) === true;
      } catch (_) {
        verdict = false;
      }
      verdicts[verdicts.length] = verdict;
    }
    return json({ ok: true, value: verdicts });
  }

  async function call(namespace, name, argsJson, maxBytes, contextJson) {
    let tool;
    try {
      tool = find(namespace, name);
    } catch (error) {
      return failure('TOOL_ERROR', 'the plugin failed to list its tools: ' + describeThrown(error));
    }
    if (tool === undefined || typeof tool.execute !== 'function') return failure('TOOL_ERROR', 'the plugin has no tool named ' + json(name));
    let value;
    try {
      const context = parse(contextJson);
      context.capabilities = capabilitiesObject();
      value = await tool.execute(parse(argsJson), context);
    } catch (error) {
      return failure('TOOL_ERROR', describeThrown(error));
    }
    return encode(value, maxBytes);
  }

  async function entry(namespace, mode, a, b, c, d) {
    if (mode === 'call') return call(namespace, a, b, c, d);
    if (mode === 'classify') return classify(namespace, a);
    return describe(namespace);
  }

  defineProperty(g, '${ENTRY_GLOBAL}', { value: entry, configurable: true, enumerable: false, writable: false });
})
`;
