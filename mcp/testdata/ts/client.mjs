// Drives `unfold mcp` with the official TypeScript MCP SDK client: it lists
// the tools, runs a bash command, opens a section that carries tools and
// sees the tool list change, then opens a content-only section and reads
// its context file as a resource. Each step prints one line "ok <step>";
// the first failure prints "FAIL <step>: <why>" and exits 1.
//
// Usage: node client.mjs UNFOLD PROJECT PROMPT.md
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [unfold, project, promptFile] = process.argv.slice(2);
if (!unfold || !project || !promptFile) {
  console.error("usage: node client.mjs UNFOLD PROJECT PROMPT.md");
  process.exit(2);
}

let step = "start";
function check(cond, why) {
  if (!cond) throw new Error(why);
}
function ok(detail) {
  console.log(`ok ${step}${detail ? ": " + detail : ""}`);
}

// Notifications that arrive before a step waits for them are counted, so
// none is missed.
let toolChanges = 0;
let wake = null;
function toolListChanged() {
  if (toolChanges > 0) {
    toolChanges--;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    // A guard against hanging, not a timing check.
    const guard = setTimeout(() => reject(new Error("no notifications/tools/list_changed")), 30000);
    wake = () => {
      clearTimeout(guard);
      resolve();
    };
  });
}

const transport = new StdioClientTransport({
  command: unfold,
  args: ["mcp", "--builtins", "bash", "--project", project, "--prompt", promptFile],
  stderr: "inherit",
});
const client = new Client({ name: "unfold-ts-test", version: "1.0.0" });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  if (wake) {
    const w = wake;
    wake = null;
    w();
  } else {
    toolChanges++;
  }
});

const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

try {
  step = "connect";
  await client.connect(transport);
  ok(client.getServerVersion()?.name);

  step = "list tools";
  const tools = await client.listTools();
  const listed = tools.tools.map((t) => t.name).sort();
  check(JSON.stringify(listed) === JSON.stringify(["bash", "help", "open_sections"]), `got tools ${listed}`);
  const bash = tools.tools.find((t) => t.name === "bash");
  check(bash.description.includes("Any bash command."), `got bash description ${JSON.stringify(bash.description)}`);
  check(bash.inputSchema.properties.command, "bash's input schema has no command");
  ok(listed.join(","));

  step = "run a bash command";
  const ran = await client.callTool({ name: "bash", arguments: { command: "echo hello from $((40+2))" } });
  check(!ran.isError, `got an error: ${text(ran)}`);
  check(ran.structuredContent.success === true, `got success ${ran.structuredContent.success}`);
  check(ran.structuredContent.output.includes("hello from 42"), `got output ${JSON.stringify(ran.structuredContent.output)}`);
  check(ran.structuredContent.screen.includes("Working directory:"), `got screen ${JSON.stringify(ran.structuredContent.screen)}`);
  check(text(ran).includes("hello from 42"), `got text ${JSON.stringify(text(ran))}`);
  ok(ran.structuredContent.output.trim());

  step = "open a section with tools";
  const changed = toolListChanged();
  const opened = await client.callTool({ name: "open_sections", arguments: { section_keys: ["tally"], reason: "to count" } });
  check(!opened.isError, `got an error: ${text(opened)}`);
  check(text(opened).includes("New tools: tally"), `got ${JSON.stringify(text(opened))}`);
  await changed;
  const after = await names();
  check(JSON.stringify(after) === JSON.stringify(["bash", "help", "open_sections", "tally"]), `got tools ${after}`);
  const tallied = await client.callTool({ name: "tally", arguments: { command: "one" } });
  check(!tallied.isError && tallied.structuredContent.output === "ran 1", `got ${JSON.stringify(tallied)}`);
  ok(after.join(","));

  step = "read a context file";
  const written = await client.callTool({ name: "open_sections", arguments: { section_keys: ["reference"], reason: "to read it" } });
  check(!written.isError, `got an error: ${text(written)}`);
  check(text(written).includes("context/reference.md"), `got ${JSON.stringify(text(written))}`);
  const resource = await client.readResource({ uri: "unfold://context/reference.md" });
  const content = resource.contents[0].text;
  check(content.startsWith("## Reference (reference)"), `got ${JSON.stringify(content)}`);
  check(content.includes("The secret word is unfolded."), `got ${JSON.stringify(content)}`);
  ok(content.split("\n")[0]);

  step = "read a screen";
  const screen = await client.readResource({ uri: "unfold://screen/bash" });
  check(screen.contents[0].text.includes("Working directory:"), `got ${JSON.stringify(screen.contents[0].text)}`);
  ok();

  step = "close";
  await client.close();
  ok();
} catch (err) {
  console.log(`FAIL ${step}: ${err.message}`);
  await client.close().catch(() => {});
  process.exit(1);
}
