#!/usr/bin/env node
// Renders one chat template with @huggingface/jinja (transformers.js's engine) for a list of
// contexts: reads {"template": TEXT, "contexts": [...]} on stdin, writes [{"text"} | {"error"}, ...].
// scripts/make_chat_goldens.py runs it to cross-check Python jinja2; NODE_PATH names where the
// package is installed (npm install --prefix DIR @huggingface/jinja).
"use strict";
const fs = require("fs");
const path = require("path");
const { Template } = require("@huggingface/jinja");

const input = JSON.parse(fs.readFileSync(0, "utf8"));
// The package's exports hide package.json; it sits one folder above the resolved entry point.
const version = JSON.parse(fs.readFileSync(
  path.join(path.dirname(require.resolve("@huggingface/jinja")), "..", "package.json"), "utf8")).version;
let template = null, parse_error = null;
try {
  template = new Template(input.template);
} catch (e) {
  parse_error = String(e.message || e);
}
const results = input.contexts.map((context) => {
  if (parse_error) return { error: parse_error };
  try {
    return { text: template.render(context) };
  } catch (e) {
    return { error: String(e.message || e) };
  }
});
process.stdout.write(JSON.stringify({ renderer: `@huggingface/jinja ${version}`, results }));
