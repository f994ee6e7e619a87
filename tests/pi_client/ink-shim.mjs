// pi's RpcClient starts `node <cliPath> --mode rpc <args>`: this is that cliPath. It runs
// `python -m ink_tui --mode rpc --rpc-dialect pi <args>` with stdin, stdout and stderr
// passed straight through (the protocol never goes through this process), forwards the
// signals RpcClient.stop() sends, and exits as ink did.
//
// PI_SHIM_PYTHON names the interpreter (the test's own); it is not passed on to ink.
import { spawn } from "node:child_process";
import { constants } from "node:os";

const python = process.env.PI_SHIM_PYTHON || "python3";
const env = { ...process.env };
delete env.PI_SHIM_PYTHON;
const args = process.argv.slice(2);
const rest = args[0] === "--mode" && args[1] === "rpc" ? args.slice(2) : args;
const child = spawn(python, ["-m", "ink_tui", "--mode", "rpc", "--rpc-dialect", "pi", ...rest], {
  stdio: "inherit",
  env,
});
// The test reads which process is ink's, to check that it is gone afterwards.
process.stderr.write(`ink-shim: ink pid ${child.pid}\n`);
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => {
  if (signal) {
    // As a shell reports it: this process's own handlers would catch a re-raised one.
    process.exit(128 + (constants.signals[signal] ?? 0));
  } else {
    process.exit(code ?? 1);
  }
});
child.on("error", (error) => {
  process.stderr.write(`ink-shim: could not start ${python}: ${error.message}\n`);
  process.exit(127);
});
