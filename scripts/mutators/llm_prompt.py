#!/usr/bin/env python3
"""llm_prompt.py TASK.json OUT.cuh [--command CMD] [--prompt-out FILE] - the
prompt-building mutator of scripts/evolve_code.py: renders the
EvoEngineer-Insight prompt of a task (task context, historical solutions,
optimisation insights, the parent's source) and pipes it to a language
model command the user configures; the reply's code is the child source.

The command: --command CMD, else $FASWEEP_LLM_CMD (split like a shell
line). It reads the prompt on stdin and writes its reply on stdout, e.g. a
wrapper around an API client or a local model server. The child is the
longest fenced code block of the reply (```cuda, ```cpp, ```c++ or a bare
fence), or the whole reply when it has no fence. --prompt-out keeps the
prompt (default: OUT.cuh.prompt.md beside the child); OUT.cuh.json gets
{"mutation": "llm: <the reply's first line of prose>"}.

Used from the loop as
  evolve_code.py SEEDS --out DIR --mutator "python3 scripts/mutators/llm_prompt.py"
with FASWEEP_LLM_CMD set. Exit 0 when a child was written; 1 when the
command fails or its reply holds no code; 2 on bad input (no command
configured, an unreadable task or parent). Python 3.11+, stdlib only.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

FENCE = re.compile(r"```[ \t]*([A-Za-z+]*)[ \t]*\n(.*?)```", re.S)
MAX_HISTORY = 8  # historical solutions shown: the fastest valid ones, then failures
MAX_FAILED = 4


def die(msg, code=2):
    print("llm_prompt.py: " + msg, file=sys.stderr)
    sys.exit(code)


def us(c):
    if c.get("status") != "ok" or c.get("median_us") is None:
        return c.get("status") or "?"
    iv = c.get("interval")
    return "%.3f us%s" % (c["median_us"], " (95 %% interval %.3f..%.3f)" % tuple(iv)
                          if isinstance(iv, list) else " (no interval)")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def solutions(task):
    """The historical solutions shown: the fastest valid candidates (with
    source), then the latest failures (with their errors)."""
    hist = [h for h in task.get("history", []) if h.get("id") != task["parent"].get("id")]
    ok = sorted((h for h in hist if h.get("status") == "ok" and h.get("median_us")),
                key=lambda h: h["median_us"])[:MAX_HISTORY]
    bad = [h for h in hist if h.get("status") != "ok"][-MAX_FAILED:]
    return ok, bad


def render(task):
    """The EvoEngineer-Insight prompt: context, the parent, historical
    solutions, insights, the instruction."""
    ctx, par = task.get("context", {}), task["parent"]
    out = ["# Task context", "",
           "You are optimising a CUDA kernel: %s." % ctx.get("kernel", "FlashAttention forward"),
           "Device: %s. Problem: %s. Timing mode: %s. Template config: %s." % (
               ctx.get("device") or "the local GPU",
               (ctx.get("problem") or {}).get("text", "?"), ctx.get("mode", "?"),
               ctx.get("config", "?")),
           "Objective: %s." % ctx.get("objective", "lower time, correct output"),
           "Each candidate is compiled, checked and timed by: `%s`." % " ".join(
               ctx.get("eval") or []),
           ""]
    if ctx.get("baseline"):
        out.append("Best SDPA baseline: %s %.3f us." % (ctx["baseline"].get("name"),
                                                       ctx["baseline"].get("median_us") or 0))
    if ctx.get("seeds_top1"):
        out.append("The sweep's top-1 config: %s, %s us." % (ctx["seeds_top1"].get("config"),
                                                            ctx["seeds_top1"].get("median_us")))
    out += ["", "# Current solution (the parent, %s: %s)" % (par.get("id"), us(par)), "",
            "```cuda", read(par["source"]).rstrip("\n"), "```", ""]
    ok, bad = solutions(task)
    out += ["# Historical solutions", ""]
    if not ok and not bad:
        out.append("(none yet)")
    for h in ok:
        out.append("- %s (generation %s, %s): %s" % (h["id"], h.get("generation"),
                                                      h.get("mutation") or "seed", us(h)))
    for h in bad:
        err = (h.get("error") or "").splitlines()[:3]
        out.append("- %s (%s): %s%s" % (h["id"], h.get("mutation") or "?", h.get("status"),
                                        ": " + " / ".join(err) if err else ""))
    if ok and ok[0].get("id") != par.get("id") and os.path.exists(ok[0].get("source", "")):
        out += ["", "The fastest so far (%s):" % ok[0]["id"], "", "```cuda",
                read(ok[0]["source"]).rstrip("\n"), "```"]
    out += ["", "# Optimisation insights", ""]
    out += ["- " + i for i in task.get("insights", [])] or ["(none)"]
    out += ["", "# Instruction", "",
            "Write an improved version of the current solution. Keep the FA_INSTANCE macro, the "
            "flash_fwd_kernel template with its parameters, the launch function and the "
            "includes; keep the output within the correctness gate. Start with one line saying "
            "what you changed, then the complete source in one ```cuda block.", ""]
    return "\n".join(out)


def code_of(reply):
    """The child source in a reply, or None."""
    blocks = [m.group(2) for m in FENCE.finditer(reply)
              if m.group(1).lower() in ("", "cuda", "cpp", "c++", "cu", "c")]
    if blocks:
        return max(blocks, key=len)
    return reply if "flash_fwd_kernel" in reply else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("task", help="the task file the loop wrote (fasweep.evolve-task/1)")
    ap.add_argument("out", help="where to write the child source")
    ap.add_argument("--command", help="the model command (default: $FASWEEP_LLM_CMD)")
    ap.add_argument("--prompt-out", help="where to keep the prompt (default: OUT.prompt.md)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds for the command")
    a = ap.parse_args()
    cmd = a.command or os.environ.get("FASWEEP_LLM_CMD", "")
    if not cmd.strip():
        die("no model command: set FASWEEP_LLM_CMD or pass --command (it reads the prompt on "
            "stdin and writes the reply on stdout)")
    try:
        task = json.loads(read(a.task))
        prompt = render(task)
    except (OSError, ValueError, KeyError, TypeError) as e:
        die("cannot build the prompt from the task file %s: %s" % (a.task, e))
    with open(a.prompt_out or a.out + ".prompt.md", "w", encoding="utf-8") as f:
        f.write(prompt)
    try:
        p = subprocess.run(shlex.split(cmd), input=prompt, capture_output=True, text=True,
                           timeout=a.timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        die("the model command %s failed: %s" % (cmd, e), 1)
    if p.returncode != 0:
        die("the model command %s exited %d: %s" % (
            cmd, p.returncode, (p.stderr.strip().splitlines() or [""])[-1]), 1)
    code = code_of(p.stdout)
    if not code:
        die("the model command's reply holds no code block (%d bytes)" % len(p.stdout), 1)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(code if code.endswith("\n") else code + "\n")
    prose = [l.strip() for l in p.stdout.split("```")[0].splitlines() if l.strip()]
    with open(a.out + ".json", "w", encoding="utf-8") as f:
        json.dump({"mutation": "llm: " + (prose[0][:150] if prose else "rewrite")}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
