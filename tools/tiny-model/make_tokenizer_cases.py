#!/usr/bin/env python3
"""Writes the tokenizer agreement cases for test/unit/tinyModel.test.ts: varied code (unicode, CRLF, tabs, long
whitespace, digits, contractions) with the trainer's token ids, so that the test can compare llama.cpp's.

  make_tokenizer_cases.py --tokenizer work/tokenizer.json --out ../../test/fixtures/models/repogate-tiny.tokenizer-cases.json
"""
import argparse, json
from tok import Tokenizer

CASES = [
    "function add(a, b) {\n  return a + b;\n}\n",
    "const x = 12345.678e-9; // numbers 007, 0x1F, 1_000_000\n",
    "if (x) {\r\n\treturn 'it''s';\r\n}\r\n",
    "    \t  \n\n\n        deeply(indented);      \n",
    "\t\t\tconst tabbed = true;\t// trailing tab\t\n",
    "const greeting = 'héllo wörld — ünïcode ✓ 日本語 😀 Ωmega';\n",
    "a  b   c    d\t\te",
    " leading space and trailing   ",
    "x = `${a}${b}`;;; ===!== => ?.?? **= <<= >>>= \\n \\t\n",
    "I'm sure they're ok, we'll see, I've, you'd. 'S 'T\n",
    "import { A } from './a';\nexport default class B extends A<string[]> {}\n",
    "١٢٣ ½ Ⅻ x² ४२\n",
    "\u00a0nbsp\u2003emsp\u3000ideo\x0bvt\x1cfs\u2028ls\n",
    "                                                                        x\n",
    "\n\n\n\n\n\n\n\n",
    "/**\n * JSDoc — “quotes” ‘single’ … ellipsis\n * @param {string} s\n */\r\n",
    "const emoji = '👩‍💻🇩🇪'; // ZWJ sequence and flags\n",
    "export const énorme = (ñ: number): number => ñ ** 2;\n",
    "// <fim_prefix> and <cc> written as text are not special\n",
    "",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tokenizer', required=True)
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    tok = Tokenizer.load(args.tokenizer)
    out = []
    for text in CASES:
        ids = tok.encode(text)
        assert tok.decode_bytes(ids) == text.encode('utf-8')
        out.append({'text': text, 'ids': ids})
    with open(args.out, 'w', encoding='utf-8') as f:
        json.dump({'tokenizer': 'repogate-tiny byte-level BPE (tools/tiny-model/tok.py)', 'cases': out}, f, ensure_ascii=False, indent=0)
    print(f'{len(out)} cases -> {args.out}')


if __name__ == '__main__':
    main()
