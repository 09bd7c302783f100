"""Calls llama_eval.mjs (llama.cpp through node-llama-cpp) on token sequences."""
import json, os, subprocess, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(model_path, items, watch=()):
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, 'in.json'), os.path.join(d, 'out.json')
        with open(src, 'w') as f:
            json.dump({'watch': list(watch), 'items': items}, f)
        subprocess.run(['node', os.path.join(HERE, 'llama_eval.mjs'), model_path, src, dst], check=True)
        with open(dst) as f:
            return json.load(f)
