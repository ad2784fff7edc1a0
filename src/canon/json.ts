/** JSON data as it comes out of `JSON.parse`: the only values Ward canonicalizes or digests. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON text decoded the way Go's encoding/json sees strings: lone surrogates become U+FFFD. */
export function parseJsonText(text: string): JsonValue {
  return wellFormed(JSON.parse(text) as JsonValue);
}

function wellFormed(value: JsonValue): JsonValue {
  if (typeof value === 'string') return value.isWellFormed() ? value : value.toWellFormed();
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormed(value[i] as JsonValue);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    let rebuilt: JsonObject | undefined;
    for (const key of Object.keys(value)) {
      if (!key.isWellFormed()) rebuilt ??= {};
    }
    if (rebuilt) {
      for (const [key, child] of Object.entries(value)) {
        // defineProperty, not assignment: a "__proto__" key must stay an own data property (as
        // JSON.parse makes it) instead of replacing the new object's prototype.
        Object.defineProperty(rebuilt, key.toWellFormed(), {
          value: wellFormed(child),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return rebuilt;
    }
    for (const key of Object.keys(value)) value[key] = wellFormed(value[key] as JsonValue);
  }
  return value;
}
