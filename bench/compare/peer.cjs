// The peers' side of bench/compare: a long-lived Node.js worker that runs
// the same workloads as the Go side with @vscode/prompt-tsx, gpt-tokenizer
// and js-tiktoken, installed at run time by run.sh (NODE_PATH points at
// them). It reads one JSON request per line on stdin and answers one JSON
// line on stdout; the Go driver times nothing here itself, it uses the
// per-iteration nanoseconds this worker reports.
'use strict';

const fs = require('fs');
const readline = require('readline');
require('@vscode/prompt-tsx'); // defines globalThis.vscpp and vscppf
const tsx = require('@vscode/prompt-tsx');
const gptO200k = require('gpt-tokenizer/cjs/encoding/o200k_base');
const gptCl100k = require('gpt-tokenizer/cjs/encoding/cl100k_base');
const { Tiktoken } = require('js-tiktoken/lite');

let workload = null;
const tiktoken = {};

function tiktokenFor(name) {
  if (!tiktoken[name]) {
    tiktoken[name] = new Tiktoken(require('js-tiktoken/ranks/' + name));
  }
  return tiktoken[name];
}

function gptFor(name) {
  return name === 'cl100k_base' ? gptCl100k : gptO200k;
}

// fresh returns a copy of specs whose bodies end with a line naming gen and
// the section's path, as fresh in workload.go does: every timed iteration
// renders bodies it has not seen.
function fresh(specs, gen, prefix) {
  return specs.map((s) => {
    const path = prefix ? prefix + '.' + s.key : s.key;
    const c = Object.assign({}, s, { body: s.body.replace(/[ \n]+$/, '') + '\n\nRevision ' + gen + ' of ' + path + '.' });
    if (s.children) c.children = fresh(s.children, gen, path);
    return c;
  });
}

// fill replaces {{.Field}} with the bound parameter, as the Go templates do.
function fill(body, params) {
  return body.replace(/\{\{\.(\w+)\}\}/g, (_, k) => String(params[k])).trim();
}

// suffix is the summary suffix for a section without tools (DESIGN.md).
function suffix(path, kids) {
  if (kids.length === 0) {
    return '[This section is summarized. To view full content, call `open_sections` with key "' + path +
      '". The content will be written to context/' + path + '.md for you to read.]';
  }
  return '[This section is summarized. Call `open_sections` with key "' + path +
    '" to write content (including subsections: ' + kids.join(', ') + ') to context/' + path + '.md.]';
}

// Section renders one section: its heading and body (or summary) as a text
// chunk, then its children, each a Section of its own.
class Section extends tsx.PromptElement {
  render() {
    const { spec, number, path, depth, params } = this.props;
    const heading = '#'.repeat(depth + 2) + ' ' + number + '. ' + spec.title + ' (' + path + ')';
    const kids = spec.children || [];
    let text;
    if (spec.summarized) {
      text = heading + '\n\n' + spec.summary + '\n\n---\n' + suffix(path, kids.map((k) => k.key));
    } else {
      const body = fill(spec.body, params);
      text = body === '' ? heading : heading + '\n\n' + body;
    }
    const out = [vscpp(tsx.TextChunk, {}, text + '\n\n')];
    if (!spec.summarized) {
      kids.forEach((k, i) => {
        out.push(vscpp(Section, {
          spec: k, number: number + '.' + (i + 1), path: path + '.' + k.key,
          depth: depth + 1, params, priority: k.priority,
        }));
      });
    }
    return vscpp(vscppf, {}, ...out);
  }
}

class Root extends tsx.PromptElement {
  render() {
    const { sections, params } = this.props;
    return vscpp(tsx.UserMessage, {}, ...sections.map((s, i) => vscpp(Section, {
      spec: s, number: String(i + 1), path: s.key, depth: 0, params, priority: s.priority,
    })));
  }
}

// tokenizer adapts a counting function to prompt-tsx's ITokenizer (raw mode).
function tokenizer(count) {
  return {
    mode: tsx.OutputMode.Raw,
    tokenLength(part) { return typeof part.text === 'string' ? count(part.text) : 0; },
    countMessageTokens(msg) {
      let n = 3;
      for (const part of msg.content) n += typeof part.text === 'string' ? count(part.text) : 0;
      return n;
    },
  };
}

// estimate is a cheap count (4 bytes a token) so the plain render measures
// rendering, not tokenization.
const estimate = tokenizer((s) => Math.ceil(s.length / 4));

function textOf(messages) {
  let s = '';
  for (const m of messages) for (const p of m.content) if (typeof p.text === 'string') s += p.text;
  return s;
}

async function renderOnce(sections, maxTokens, tok) {
  const r = new tsx.PromptRenderer({ modelMaxPromptTokens: maxTokens }, Root,
    { sections, params: workload.params }, tok);
  return r.render();
}

async function timed(iters, fn) {
  const ns = [];
  let last;
  for (let i = 0; i < iters; i++) {
    const t0 = process.hrtime.bigint();
    last = await fn();
    ns.push(Number(process.hrtime.bigint() - t0));
  }
  return { ns, last };
}

// loadSkills reads every DIR/NAME/SKILL.md whole and parses its front
// matter with js-yaml, as a client's loader does: names and descriptions.
function loadSkills(dir) {
  const yaml = require('js-yaml');
  const out = [];
  for (const name of fs.readdirSync(dir).sort()) {
    let text;
    try {
      text = fs.readFileSync(dir + '/' + name + '/SKILL.md', 'utf8');
    } catch (e) {
      continue;
    }
    const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text);
    if (!m) continue;
    const meta = yaml.load(m[1]);
    out.push(meta.name + '\t' + String(meta.description).trim());
  }
  return out;
}

// timedFresh times fn on the sections of generations gen, gen+1, ...: each
// is made before its clock starts.
async function timedFresh(iters, specs, gen, fn) {
  const ns = [];
  let last;
  for (let i = 0; i < iters; i++) {
    const sections = fresh(specs, gen + i, '');
    const t0 = process.hrtime.bigint();
    last = await fn(sections);
    ns.push(Number(process.hrtime.bigint() - t0));
  }
  return { ns, last };
}

const ops = {
  load(req) {
    workload = JSON.parse(fs.readFileSync(req.file, 'utf8'));
    return { ok: true };
  },
  async render(req) {
    const { ns, last } = await timedFresh(req.iters, workload.render, req.gen, (secs) => renderOnce(secs, 1 << 30, estimate));
    return { ns, bytes: Buffer.byteLength(textOf(last.messages).trimEnd()) };
  },
  // text is the text of one generation's tree without a budget, less the
  // blank line after the last section, for the Go side to compare.
  async text(req) {
    const r = await renderOnce(fresh(workload[req.workload], req.gen, ''), 1 << 30, estimate);
    return { text: textOf(r.messages).trimEnd() };
  },
  async budget(req) {
    const tok = tokenizer((s) => gptO200k.countTokens(s));
    const { ns, last } = await timedFresh(req.iters, workload.budget, req.gen, (secs) => renderOnce(secs, workload.budgetTokens, tok));
    const text = textOf(last.messages).trimEnd();
    return { ns, tokens: last.tokenCount, textTokens: gptO200k.countTokens(text), bytes: Buffer.byteLength(text) };
  },
  skills(req) {
    const ns = [];
    let last;
    for (let i = 0; i < req.iters; i++) {
      const t0 = process.hrtime.bigint();
      last = loadSkills(req.dir);
      ns.push(Number(process.hrtime.bigint() - t0));
    }
    return req.list ? { list: last } : { ns, count: last.length };
  },
  async count(req) {
    const text = fs.readFileSync(req.file, 'utf8');
    const fn = req.lib === 'js-tiktoken'
      ? () => tiktokenFor(req.encoding).encode(text).length
      : () => gptFor(req.encoding).countTokens(text);
    const { ns, last } = await timed(req.iters, fn);
    return { ns, count: last };
  },
};

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue = [];
let busy = false;
async function drain() {
  if (busy) return;
  busy = true;
  while (queue.length) {
    const line = queue.shift();
    let out;
    try {
      const req = JSON.parse(line);
      const op = ops[req.op];
      if (!op) throw new Error('unknown op ' + req.op);
      out = await op(req);
    } catch (e) {
      out = { error: String(e && e.stack || e) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  }
  busy = false;
}
rl.on('line', (line) => { queue.push(line); drain(); });
