/** Shell quoting for text shown to users or written into the terminal shim. No `vscode` import. */

import { CLI_VERBS } from './generated/verbs';

export { CLI_VERBS };

/** Quotes one word for a POSIX shell: `it's` → `'it'\''s'`; safe words stay bare. */
export function quote(word: string): string {
    if (word === '') return "''";
    if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
    return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** An argv as one line of shell. */
export function join(argv: readonly string[]): string {
    return argv.map(quote).join(' ');
}

/**
 * The `rankdebug` shim put on integrated terminals' PATH.
 * Steps: the CLI's verbs (`CLI_VERBS`) and its top-level options go straight to it; anything else is a
 * training command: it runs under `rankdebug launch --json`, whose events go to a file in
 * $RANKDEBUG_ENDPOINTS that the extension watches (it then attaches), while the job's own
 * output stays in the terminal.
 */

export function shimScript(): string {
    return `#!/bin/sh
# rankdebug: put on this terminal's PATH by the Rank Debugger extension.
#   rankdebug torchrun --nproc_per_node 4 train.py      debug rank 0 (RANKDEBUG_RANKS, default 0)
#   rankdebug --ranks 1,3 torchrun ...                   debug ranks 1 and 3
#   rankdebug ${CLI_VERBS.join('|')} ...   the rankdebug command itself
py="\${RANKDEBUG_PYTHON:-python3}"
main="\${RANKDEBUG_MAIN:?the Rank Debugger extension did not set RANKDEBUG_MAIN}"
case "\${1:-}" in
    ${CLI_VERBS.join('|')}|-h|--help|--version|"") exec "$py" "$main" "$@" ;;
esac
ranks="\${RANKDEBUG_RANKS:-0}"
if [ "\${1:-}" = "--ranks" ] && [ $# -ge 2 ]; then ranks="$2"; shift 2; fi
case "\${1:-}" in --ranks=*) ranks="\${1#--ranks=}"; shift ;; esac
[ "\${1:-}" = "--" ] && shift
dir="\${RANKDEBUG_ENDPOINTS:-}"
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "rankdebug: not in a VS Code terminal with Rank Debugger; use 'rankdebug launch' instead" >&2
    exit 2
fi
events="$dir/$$.jsonl"
"$py" "$main" launch --json --ranks "$ranks" -- "$@" > "$events"
code=$?
exit $code
`;
}
