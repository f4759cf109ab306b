// The realm has no DOMException, and the Web APIs below throw one (DataCloneError,
// QuotaExceededError, InvalidCharacterError...). A few lines, not a dependency: the npm
// polyfill (`domexception`) is deprecated. Only the names these helpers use get a legacy
// code. Built on first use from intrinsics captured when the realm was built.

export interface DOMException extends Error {
  readonly code: number;
}

export type DOMExceptionConstructor = new (message?: string, name?: string) => DOMException;

export function makeDOMException(ErrorIntrinsic: ErrorConstructor, StringIntrinsic: StringConstructor, defineProperty: typeof Object.defineProperty, create: typeof Object.create): DOMExceptionConstructor {
  const legacyCodes = create(null) as Record<string, number>;
  legacyCodes.InvalidCharacterError = 5;
  legacyCodes.TypeMismatchError = 17;
  legacyCodes.QuotaExceededError = 22;
  legacyCodes.DataCloneError = 25;
  return class DOMException extends ErrorIntrinsic {
    declare readonly code: number;

    constructor(message: unknown = '', name: unknown = 'Error') {
      super(StringIntrinsic(message));
      const text = StringIntrinsic(name);
      // Null-prototype descriptors: plugin code may have put `get` or `set` on Object.prototype.
      const nameDescriptor = create(null) as PropertyDescriptor;
      nameDescriptor.value = text;
      nameDescriptor.writable = true;
      nameDescriptor.configurable = true;
      defineProperty(this, 'name', nameDescriptor);
      const codeDescriptor = create(null) as PropertyDescriptor;
      codeDescriptor.value = legacyCodes[text] ?? 0;
      codeDescriptor.configurable = true;
      defineProperty(this, 'code', codeDescriptor);
    }
  };
}
