// URL and URLSearchParams: whatwg-url, the reference implementation of the WHATWG URL
// Standard (jsdom's), bundled with its UTF-8 path only (see url-encoding.ts).
export { URL, URLSearchParams } from 'whatwg-url';
