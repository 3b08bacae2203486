// Renders the templates TestDifferential generates with Dotprompt's
// reference implementation (the npm package dotprompt, on Handlebars.js),
// writing testdata/reference.jsonl, which the test compares both Go
// renderers with. From bench/dotprompt:
//
//	go test -run TestDifferential -dump /tmp/cases.jsonl .
//	(cd js && npm ci) && node js/render.mjs < /tmp/cases.jsonl > testdata/reference.jsonl
import { Dotprompt } from 'dotprompt';
import readline from 'node:readline';

const dp = new Dotprompt();
// The shape the Go test compares: roles, text and media parts (pending
// parts, which carry only metadata, left out as the Go side leaves them).
const shape = (ms) => ms.map((m) => ({
  role: m.role,
  content: m.content
    .filter((p) => p.text !== undefined || p.media)
    .map((p) => (p.media
      ? { media: p.media.contentType ? { url: p.media.url, contentType: p.media.contentType } : { url: p.media.url } }
      : (p.text ? { text: p.text } : {}))),
}));
for await (const line of readline.createInterface({ input: process.stdin })) {
  const c = JSON.parse(line);
  const out = { seed: c.seed, sum: c.sum };
  try {
    out.messages = shape((await dp.render(c.template, { input: c.input, messages: c.history })).messages);
  } catch (e) {
    out.error = String(e);
  }
  console.log(JSON.stringify(out));
}
