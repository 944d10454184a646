"""Runs a composite GitHub Action's steps as GitHub's runner does, for the tests of action.yml.

usage: action_runner.py ACTION_DIR WITH_JSON OUTPUTS_FILE

The runner's rules kept here: the inputs a `with:` gives, else each input's default (an input
the action does not declare is an error); `${{ }}` expressions in a step's `name`, `env` and
`run` and in the outputs' `value`, evaluated from `inputs`, `github.action_path`, `runner.temp`
and `steps.<id>.outputs` (any other expression is an error, so a test cannot pass over one);
`shell: bash` run as `bash --noprofile --norc -eo pipefail FILE`; per step a new
`GITHUB_OUTPUT` file read back afterwards (`name=value` and `name<<DELIMITER` blocks), and
`GITHUB_PATH` lines put before PATH for the steps after; the first failing step ends the action
with its status. The action's outputs are written to OUTPUTS_FILE as JSON.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def evaluate(text, context):
    def value(match):
        path = match.group(1).split(".")
        node = context
        for part in path:
            if not isinstance(node, dict) or part not in node:
                if path[0] == "steps" and len(path) == 4 and path[2] == "outputs":
                    return ""  # a step that did not run, or set no such output
                raise SystemExit(f"action_runner: unsupported expression ${{{{ {match.group(1)} }}}}")
            node = node[part]
        return str(node)

    return EXPRESSION.sub(value, str(text))


def read_outputs(path):
    outputs = {}
    with open(path, encoding="utf-8") as file:
        lines = iter(file.read().splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            outputs[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def main():
    action_dir, with_json, outputs_file = sys.argv[1:4]
    action_dir = os.path.abspath(action_dir)
    with open(os.path.join(action_dir, "action.yml"), encoding="utf-8") as file:
        action = yaml.safe_load(file)
    if action["runs"]["using"] != "composite":
        raise SystemExit("action_runner: not a composite action")
    declared = action.get("inputs") or {}
    given = json.loads(with_json)
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise SystemExit(f"action_runner: inputs the action does not declare: {unknown}")
    inputs = {name: str(given.get(name, spec.get("default", ""))) for name, spec in declared.items()}
    runner_temp = os.environ["RUNNER_TEMP"]
    context = {
        "inputs": inputs,
        "github": {"action_path": action_dir},
        "runner": {"temp": runner_temp},
        "steps": {},
    }
    path_file = tempfile.mktemp(prefix="path-", dir=runner_temp)
    open(path_file, "w").close()
    status = 0
    for number, step in enumerate(action["runs"]["steps"]):
        if step.get("shell") != "bash" or "run" not in step:
            raise SystemExit(f"action_runner: step {number} is not a bash run step")
        output_file = tempfile.mktemp(prefix="output-", dir=runner_temp)
        open(output_file, "w").close()
        env = dict(os.environ)
        for name, value in (step.get("env") or {}).items():
            env[name] = evaluate(value, context)
        with open(path_file, encoding="utf-8") as file:
            added = [line for line in file.read().splitlines() if line]
        env["PATH"] = os.pathsep.join(list(reversed(added)) + [env["PATH"]])
        env.update(GITHUB_ACTION_PATH=action_dir, GITHUB_OUTPUT=output_file, GITHUB_PATH=path_file)
        script = tempfile.mktemp(prefix="step-", suffix=".sh", dir=runner_temp)
        with open(script, "w", encoding="utf-8") as file:
            file.write(evaluate(step["run"], context))
        print(f"##[group]Run {evaluate(step.get('name', step['run']), context)}", flush=True)
        status = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], env=env).returncode
        print("##[endgroup]", flush=True)
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": read_outputs(output_file)}
        if status != 0:
            break
    outputs = {}
    for name, spec in (action.get("outputs") or {}).items():
        outputs[name] = evaluate(spec["value"], context)
    with open(outputs_file, "w", encoding="utf-8") as file:
        json.dump({"status": status, "outputs": outputs}, file)
    sys.exit(status)


if __name__ == "__main__":
    main()
