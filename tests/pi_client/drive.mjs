// Drives ink through pi's own RpcClient (from the npm package), one scenario a run:
//   node drive.mjs <scenario> <config json>
// config: {npmDir, shim, python, cwd, args, gate, pidFile}. RpcClient starts `node <shim> --mode rpc
// <args>`; the shim starts ink in pi's dialect. Prints one JSON line: what each step
// returned and the events it saw, for tests/test_rpc_pi_client.py to check.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [scenario, raw] = process.argv.slice(2);
const config = JSON.parse(raw);
const WITHIN = 30000;

// The package's own entry point ("." in its exports), from the folder npm installed it
// into (outside the repository: CI and the tests install it there).
const packageDir = join(config.npmDir, "node_modules", "@earendil-works", "pi-coding-agent");
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
const entry = join(packageDir, manifest.exports["."].import);
const { RpcClient } = await import(pathToFileURL(entry).href);

const client = new RpcClient({
  cliPath: config.shim,
  cwd: config.cwd,
  args: config.args,
  env: { PI_SHIM_PYTHON: config.python },
});
const events = [];
client.onEvent((event) => events.push(event));
// A step that times out is reported in the result, never as a crash of this script.
process.on("unhandledRejection", (error) => {
  process.stderr.write(`drive.mjs: unhandled rejection: ${error?.stack ?? error}\n`);
});

// The next event (from now on) that `predicate` accepts.
function nextEvent(predicate, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no ${what} within ${WITHIN} ms`));
    }, WITHIN);
    const stop = client.onEvent((event) => {
      if (predicate(event)) {
        clearTimeout(timer);
        stop();
        resolve(event);
      }
    });
  });
}

async function refused(call) {
  try {
    await call();
    return null;
  } catch (error) {
    return error.message;
  }
}

function openGate() {
  writeFileSync(config.gate, "open");
}

const scenarios = {
  // A prompt run to its end, then what the session says of itself.
  async prompt() {
    const collected = await client.promptAndWait("say hello", undefined, WITHIN);
    return {
      collected,
      state: await client.getState(),
      messages: await client.getMessages(),
      lastText: await client.getLastAssistantText(),
      stats: await client.getSessionStats(),
      commands: await client.getCommands(),
      forkMessages: await client.getForkMessages(),
      // send() hands back the response itself, refusals included.
      unknown: (await client.send({ type: "no_such_command" })).error,
    };
  },

  // Steer and follow up while the model's bash call waits on the gate.
  async steer() {
    const started = nextEvent((e) => e.type === "tool_execution_start", "tool_execution_start");
    const disposition = await client.prompt("run the slow command");
    const toolStart = await started;
    const busyPrompt = await refused(() => client.prompt("not queued"));
    const steered = await client.steer("steer one");
    const followed = await client.followUp("follow up one");
    const queuedPrompt = await client.prompt("steer two", undefined, "steer");
    const stateWhileBusy = await client.getState();
    const idle = client.waitForIdle(WITHIN);
    openGate();
    await idle;
    return {
      disposition,
      toolStart,
      busyPrompt,
      steered,
      followed,
      queuedPrompt,
      stateWhileBusy,
      events,
      state: await client.getState(),
      messages: await client.getMessages(),
    };
  },

  // Abort while the model's bash call runs: the run settles aborted, the command is gone.
  async abort() {
    const started = nextEvent((e) => e.type === "tool_execution_start", "tool_execution_start");
    const settled = nextEvent((e) => e.type === "agent_settled", "agent_settled");
    await client.prompt("run the endless command");
    await started;
    while (!existsSync(config.pidFile)) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await client.abort();
    const settledEvent = await settled;
    return { settledEvent, events, state: await client.getState() };
  },

  // pi's bash, then a new session.
  async bash() {
    const ran = await client.bash("echo hello from bash; echo to stderr >&2; exit 3");
    const before = await client.getState();
    const fresh = await client.newSession();
    const after = await client.getState();
    return { ran, before, fresh, after, events };
  },
};

let result;
try {
  await client.start();
  result = { ok: true, ...(await scenarios[scenario]()) };
} catch (error) {
  result = { ok: false, error: String(error?.stack ?? error) };
}
await client.stop();
const pid = /ink-shim: ink pid (\d+)/.exec(client.getStderr());
result.inkPid = pid ? Number(pid[1]) : null;
process.stdout.write(`${JSON.stringify(result)}\n`);
