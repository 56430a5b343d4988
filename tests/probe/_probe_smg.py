"""smg's gateway (its Rust chat route, parsers and detokenizer) over a scripted gRPC worker that
plays the probe's model (run as a script).

    python _probe_smg.py --port 9000 --tool-parser qwen [--reasoning-parser qwen3]

The worker is parsebridge's scripted SGLang-scheduler worker (`adapters.smg._worker`) with
one change: a request's script is the probe scenario its prompt was made from (the folder's
chat template joins the messages' text), one byte-token a step; a forced choice gets the JSON smg constrains it to. The gateway is smg's own
``python -m smg launch`` on `--port`, stopped when this script ends.
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import subprocess
import sys
from typing import Any

from _probe_model import output, scenario_in

from parsebridge.adapters._served import model_folder
from parsebridge.adapters._served.steps import Script
from parsebridge.adapters.smg._worker import ScriptedWorker
from parsebridge.lifecycle import free_port


class ProbeWorker(ScriptedWorker):
    """The scripted worker, answering each probe scenario with the scripted model's output."""

    counter = itertools.count()

    def script_for(self, input_ids: Any) -> Script | None:
        scenario = scenario_in(self.folder.decode(list(input_ids)))
        if scenario is None:
            return None  # the gateway's own requests: the worker's plain answer
        script = Script(self.board, f"probe-{next(self.counter)}")
        for token in self.folder.encode(output(scenario, "json")):
            script.put([token])
        script.end("stop")
        return script


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tool-parser")
    ap.add_argument("--reasoning-parser")
    args = ap.parse_args()
    built = model_folder(())
    folder = str(built.path)
    worker = ProbeWorker(built)
    worker_port = worker.start()
    cmd = [sys.executable, "-m", "smg", "launch", "--host", "127.0.0.1", "--port", str(args.port)]
    cmd += [
        "--worker-urls",
        f"grpc://127.0.0.1:{worker_port}",
        "--tokenizer-path",
        folder,
        "--model-path",
        folder,
    ]
    metrics = free_port(avoid=(args.port,))  # (smg refuses to start with one port for both)
    cmd += ["--prometheus-host", "127.0.0.1", "--prometheus-port", str(metrics), "--log-level", "warn"]
    if args.tool_parser:
        cmd += ["--tool-call-parser", args.tool_parser]
    if args.reasoning_parser:
        cmd += ["--reasoning-parser", args.reasoning_parser]
    gateway = subprocess.Popen(cmd, env={**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    signal.signal(signal.SIGTERM, lambda *_: gateway.terminate())
    try:
        gateway.wait()
    finally:
        if gateway.poll() is None:
            gateway.terminate()
            gateway.wait(10)
        worker.stop()


if __name__ == "__main__":
    main()
