// whatwg-url loads @exodus/bytes/encoding.js only to register the legacy multi-byte
// encodings (Shift_JIS, GBK...), which only an HTML form's document encoding selects: the
// URL API always encodes UTF-8. Bundled in its place, this keeps 150 KB of tables out.
export {};
