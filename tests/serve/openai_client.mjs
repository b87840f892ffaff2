// serve through OpenAI's own Node client (npm `openai`): the model list, a streamed chat completion and an
// error, printed as one JSON line for test_serve.cpp.
//   node openai_client.mjs BASE_URL API_KEY MODEL    (NODE_PATH: the node_modules holding `openai`)
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const OpenAI = require(require.resolve("openai", { paths: [process.env.OPENAI_NODE_MODULES] }));
const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60000 });
const out = { models: (await client.models.list()).data.map((m) => m.id) };
const stream = await client.chat.completions.create({
  model, messages: [{ role: "user", content: "Tell me a story" }], max_tokens: 40, temperature: 0.9, top_k: 40,
  top_p: 0.95, seed: 7, stream: true, ignore_eos: true,
});
out.text = "";
out.chunks = 0;
for await (const chunk of stream) {
  out.chunks++;
  out.text += chunk.choices[0]?.delta?.content ?? "";
  if (chunk.choices[0]?.finish_reason) out.finish_reason = chunk.choices[0].finish_reason;
  if (chunk.usage) out.usage = chunk.usage;
}
try {
  await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "x" }] });
} catch (e) {
  out.error = { status: e.status, code: e.code };
}
console.log(JSON.stringify(out));
