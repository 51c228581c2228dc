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

The command runs in a process group of its own inside this script's
session (the loop runs this script in a session of its own and kills that
session whole, the model included, whatever becomes of this script): on
--timeout (default 600 s, below the loop's default --mutator-timeout of
900 s; run by the loop, at most the loop's --mutator-timeout, which it
passes as $FASWEEP_MUTATOR_TIMEOUT, less 3 s or half of it when that is
more, so a slow model is reported here rather than cut off by the loop)
and on SIGTERM, SIGHUP or SIGINT of this script (the loop's own timeout)
the whole group is killed, whatever the command started. The prompt and
the check of the reply follow the task's family (its instance macro and
kernel template, from the task context). Messages are one line, control
characters in them (the model's stderr, say) escaped as \\xHH.

Used from the loop as
  evolve_code.py SEEDS --out DIR --mutator "python3 scripts/mutators/llm_prompt.py"
with FASWEEP_LLM_CMD set. Exit 0 when a child was written; 1 when the
command fails, times out or its reply holds no code; 2 on bad input (no
command configured, an unreadable task or parent); 128+N on signal N.
Python 3.11+, stdlib only.
"""
import argparse
import json
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from evolve_code import (MAX_SOURCE, BadInput, Terminated, dumps, raise_on_signals,  # noqa: E402
                         read_text, run_group, say)

FENCE = re.compile(r"```[ \t]*([A-Za-z+]*)[ \t]*\n(.*?)```", re.S)
MAX_HISTORY = 8  # historical solutions shown: the fastest valid ones, then failures
MAX_FAILED = 4
DEFAULT_TIMEOUT = 600  # below evolve_code.py's default --mutator-timeout (900 s)
KILL_GRACE = 2.0  # below the loop's 5 s between SIGTERM and SIGKILL of this script's group
MAX_TASK = 64 << 20


def die(msg, code=2):
    say("llm_prompt.py: " + msg, sys.stderr)  # escaped: it may quote the model's stderr
    sys.exit(code)


def fitted_timeout(asked):
    """(seconds, note): the model's timeout. Run by the loop, which passes
    its --mutator-timeout as $FASWEEP_MUTATOR_TIMEOUT, it ends early
    enough to kill the model's group (KILL_GRACE) and report it before the
    loop's own timeout kills this script: at most that minus KILL_GRACE + 1
    s (at least half of it)."""
    try:
        loop = float(os.environ.get("FASWEEP_MUTATOR_TIMEOUT", ""))
    except ValueError:
        return asked, ""
    if not 0 < loop < float("inf"):
        return asked, ""
    room = max(loop - (KILL_GRACE + 1), loop / 2)
    if asked <= room:
        return asked, ""
    return room, ", cut to fit within the loop's --mutator-timeout of %g s" % loop


def us(c):
    if c.get("status") != "ok" or c.get("median_us") is None:
        return c.get("status") or "?"
    iv = c.get("interval")
    return "%.3f us%s" % (c["median_us"], " (95 %% interval %.3f..%.3f)" % tuple(iv)
                          if isinstance(iv, list) else " (no interval)")


def read(path, what="the parent source", limit=MAX_SOURCE):
    """The text of a regular file of at most limit bytes (evolve_code's
    read_text: a FIFO is refused, never waited on); OSError otherwise."""
    try:
        return read_text(path, limit, what)
    except BadInput as e:
        raise OSError(str(e))


def solutions(task):
    """The historical solutions shown: the fastest valid candidates (with
    source), then the latest failures (with their errors)."""
    hist = [h for h in task.get("history", []) if h.get("id") != task["parent"].get("id")]
    ok = sorted((h for h in hist if h.get("status") == "ok" and h.get("median_us")),
                key=lambda h: h["median_us"])[:MAX_HISTORY]
    bad = [h for h in hist if h.get("status") != "ok"][-MAX_FAILED:]
    return ok, bad


def markers(task):
    """The instance macro and kernel template the task's family needs."""
    ctx = task.get("context") or {}
    return ctx.get("instance_macro") or "FA_INSTANCE", ctx.get("kernel_template") or \
        "flash_fwd_kernel"


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
    fastest = None
    if ok and ok[0].get("id") != par.get("id") and isinstance(ok[0].get("source"), str):
        try:
            fastest = read(ok[0]["source"], "the fastest source")
        except OSError:
            pass  # (gone, or not a regular file: the prompt goes without it)
    if fastest is not None:
        out += ["", "The fastest so far (%s):" % ok[0]["id"], "", "```cuda",
                fastest.rstrip("\n"), "```"]
    out += ["", "# Optimisation insights", ""]
    out += ["- " + i for i in task.get("insights", [])] or ["(none)"]
    macro, kernel = markers(task)
    out += ["", "# Instruction", "",
            "Write an improved version of the current solution. Keep the %s macro, the "
            "%s template with its parameters, the launch function and the "
            "includes; keep the output within the correctness gate. Start with one line saying "
            "what you changed, then the complete source in one ```cuda block." % (macro, kernel),
            ""]
    return "\n".join(out)


def code_of(reply, kernel="flash_fwd_kernel"):
    """The child source in a reply, or None."""
    blocks = [m.group(2) for m in FENCE.finditer(reply)
              if m.group(1).lower() in ("", "cuda", "cpp", "c++", "cu", "c")]
    if blocks:
        return max(blocks, key=len)
    return reply if kernel in reply else None


def main():
    # the first paragraph of the docstring, whole (never a sentence cut at a line end)
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("task", help="the task file the loop wrote (fasweep.evolve-task/1)")
    ap.add_argument("out", help="where to write the child source")
    ap.add_argument("--command", help="the model command (default: $FASWEEP_LLM_CMD)")
    ap.add_argument("--prompt-out", help="where to keep the prompt (default: OUT.prompt.md)")
    ap.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT,
                    help="seconds for the command; then its process group is killed (default "
                    "%d, below evolve_code.py's default --mutator-timeout of 900 s, so the loop "
                    "sees this script's failure, not its own timeout; run by the loop, at most "
                    "its --mutator-timeout, passed as $FASWEEP_MUTATOR_TIMEOUT, less %g s or half "
                    "of it when that is more)"
                    % (DEFAULT_TIMEOUT, KILL_GRACE + 1))
    a = ap.parse_args()
    cmd = a.command or os.environ.get("FASWEEP_LLM_CMD", "")
    if not cmd.strip():
        die("no model command: set FASWEEP_LLM_CMD or pass --command (it reads the prompt on "
            "stdin and writes the reply on stdout)")
    try:
        text = read(a.task, "the task file", MAX_TASK)
    except OSError as e:
        die(str(e))
    try:
        task = json.loads(text)
        prompt = render(task)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        die("cannot build the prompt from the task file %s: %s" % (a.task, e))
    prompt_path = a.prompt_out or a.out + ".prompt.md"
    try:
        with open(prompt_path, "w", encoding="utf-8") as f:
            f.write(prompt)
    except OSError as e:
        die("cannot write the prompt to %s: %s" % (prompt_path, e.strerror))
    raise_on_signals()
    timeout, cut = fitted_timeout(a.timeout)
    try:
        # A process group of its own inside this script's session: the loop,
        # which started that session, kills it with this script whatever
        # becomes of this script.
        rc, reply, err = run_group(shlex.split(cmd), timeout, stdin_path=prompt_path,
                                   grace=KILL_GRACE, session=False)
    except (OSError, ValueError) as e:
        die("the model command %s cannot be run: %s" % (cmd, getattr(e, "strerror", None) or e),
            1)
    except KeyboardInterrupt:
        die("interrupted; the model command's process group was killed", 130)
    except Terminated as e:
        die("terminated by signal %d; the model command's process group was killed" % e.signum,
            128 + e.signum)
    if rc is None:
        die("the model command %s did not answer within %g s (--timeout%s); its process group "
            "was killed" % (cmd, timeout, cut), 1)
    if rc != 0:
        die("the model command %s exited %d: %s" % (
            cmd, rc, (err.strip().splitlines() or [""])[-1]), 1)
    code = code_of(reply, markers(task)[1])
    if not code:
        die("the model command's reply holds no code block (%d bytes)" % len(reply), 1)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(code if code.endswith("\n") else code + "\n")
    prose = [l.strip() for l in reply.split("```")[0].splitlines() if l.strip()]
    with open(a.out + ".json", "w", encoding="utf-8") as f:
        f.write(dumps({"mutation": "llm: " + (prose[0][:150] if prose else "rewrite")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
