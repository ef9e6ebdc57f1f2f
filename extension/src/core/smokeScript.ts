/**
 * The smoke run as the editor shows it: `rankdebug smoke --json` read and checked, and the
 * two sides of its diff written as small shell scripts in one layout (one option per line),
 * so the diff lines up flag by flag. No `vscode` import.
 */
import type { AnswerJson, ChangeJson, CopyJson } from './generated/smokeAnswer';
import { quote } from './shell';
import type { Raw } from './raw';

/** One knob the smoke run changed: `per_device_train_batch_size` 8 → 1, and where it lives. */
export interface SmokeChange {
    name: string;
    from: unknown;
    to: unknown;
    why: string;
    where: string;
}

/** A config file the smoke run wrote as a copy (the user's own is never edited). */
export interface SmokeCopy {
    from: string;
    to: string;
}

/** What `rankdebug smoke --json` prints (the contract), plus the optional keys the editor uses. */
export interface SmokeAnswer {
    argv: string[];
    env: Record<string, string>;
    changes: SmokeChange[];
    files: string[];
    /** The command as written, in the same form: the left side of the diff. */
    original: { argv: string[]; env: Record<string, string> };
    /** The folder the command runs in (`plan.cwd`). */
    cwd: string | undefined;
    /** Config copies with the file each was copied from. */
    copies: SmokeCopy[];
    /** Knobs that could not be found (`no step limit found: the run may be long`), then other notes. */
    notes: string[];
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function stringMap(v: unknown): Record<string, string> {
    if (!isRecord(v)) return {};
    return Object.fromEntries(Object.entries(v).filter(([, x]) => typeof x === 'string')) as Record<string, string>;
}

/**
 * Reads the CLI's answer; throws with what is missing when it is not a smoke answer.
 * Steps: argv and the original command (required, non-empty), env, changes (each with
 * name/why/where as text), files, copies, notes and the folder the command runs in.
 */
export function parseSmoke(answer: Raw<AnswerJson>): SmokeAnswer {
    if (!isStrings(answer.argv) || answer.argv.length === 0) throw new Error('rankdebug smoke gave no command (argv)');
    const changes: SmokeChange[] = Array.isArray(answer.changes)
        ? answer.changes.filter(isRecord).map((c: Raw<ChangeJson>) => ({
              name: String(c.name ?? ''),
              from: c.from,
              to: c.to,
              why: String(c.why ?? ''),
              where: String(c.where ?? ''),
          }))
        : [];
    if (!isRecord(answer.original) || !isStrings(answer.original.argv)) throw new Error('rankdebug smoke gave no original command');
    const original = { argv: answer.original.argv, env: stringMap(answer.original.env) };
    const cwd = isRecord(answer.plan) && typeof answer.plan.cwd === 'string' ? answer.plan.cwd : undefined;
    const copies = Array.isArray(answer.copies)
        ? answer.copies.filter(isRecord).flatMap((c: Raw<CopyJson>) => (typeof c.from === 'string' && typeof c.to === 'string' ? [{ from: c.from, to: c.to }] : []))
        : [];
    // Knobs not found first (`no step limit found: the run may be long`), then other notes.
    const notes = [...(isStrings(answer.missing) ? answer.missing : []), ...(isStrings(answer.notes) ? answer.notes : [])];
    return { argv: answer.argv, env: stringMap(answer.env), changes, files: isStrings(answer.files) ? answer.files : [], original, copies, notes, cwd };
}

/** A word that starts a line of its own: an option, a `key=value` override, a script or config path. */
function startsLine(word: string): boolean {
    return word.startsWith('-') || /^[+~]?[\w.]+=/.test(word) || /\.(py|sh|ya?ml|json|toml)$/.test(word);
}

/** The command as shell lines: `cd`, `export`s, then the argv with one option (and its value) per line. */
export function commandText(argv: readonly string[], env: Record<string, string>, cwd: string | undefined): string[] {
    const out: string[] = [];
    if (cwd) out.push(`cd ${quote(cwd)}`);
    for (const [k, v] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) out.push(`export ${k}=${quote(v)}`);
    const lines: string[][] = [];
    argv.forEach((word, i) => {
        if (i === 0 || startsLine(word) || lines.length === 0) lines.push([word]);
        else lines[lines.length - 1].push(word);
    });
    // The launcher and its program name (`python -m`, `accelerate launch`) stay together.
    lines.forEach((words, i) => out.push(`${i === 0 ? '' : '    '}${words.map(quote).join(' ')}${i < lines.length - 1 ? ' \\' : ''}`));
    return out;
}

function shown(value: unknown): string {
    if (value === null || value === undefined) return '(unset)';
    return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Where the command came from, as the scripts' first comment says it. */
export interface SmokeOrigin {
    /** `train.sh:5`, or `the terminal`. */
    label: string;
    cwd: string | undefined;
}

/** `where` when it tells more than the name (`ds_config.json: train_batch_size`, not `--max_iters=`). */
function whereNote(c: SmokeChange): string {
    const bare = (t: string): string => t.replace(/^-+/, '').replace(/[=\s]+$/, '');
    return c.where && bare(c.where) !== bare(c.name) ? `  [${c.where}]` : '';
}

/** The right side: the smoke command with what changed and why, ready to Run or Debug. */
export function smokeScript(answer: SmokeAnswer, origin: SmokeOrigin): string {
    const width = Math.max(0, ...answer.changes.map((c) => c.name.length));
    const values = answer.changes.map((c) => `${shown(c.from)} → ${shown(c.to)}`);
    const vwidth = Math.max(0, ...values.map((v) => v.length));
    const lines = [
        '#!/usr/bin/env bash',
        `# Smoke run of ${origin.label} (rankdebug smoke); your own files are unchanged.`,
        '# Edit it here, then Run or Debug it from the editor title bar.',
        '#',
        ...answer.changes.map((c, i) => `#   ${c.name.padEnd(width)}  ${values[i].padEnd(vwidth)}  ${c.why}${whereNote(c)}`),
        ...(answer.changes.length === 0 ? ['#   nothing to shrink was found'] : []),
        ...answer.notes.map((n) => `#   ! ${n}`),
        ...answer.copies.map((c) => `#   config copy: ${c.to} (from ${c.from})`),
        ...answer.files.filter((f) => !answer.copies.some((c) => c.to === f)).map((f) => `#   config copy: ${f}`),
        '',
        ...commandText(answer.argv, answer.env, origin.cwd),
        '',
    ];
    return lines.join('\n');
}

/** The left side: the command as written, in the same layout. */
export function originalScript(answer: SmokeAnswer, origin: SmokeOrigin): string {
    const body = commandText(answer.original.argv, answer.original.env, origin.cwd);
    return ['#!/usr/bin/env bash', `# The command as written in ${origin.label}.`, '', ...body, ''].join('\n');
}

/** The 0-based line a smoke script's command starts on (after comments, `cd` and `export`s), or undefined. */
export function commandLine(text: string): number | undefined {
    const lines = text.split(/\r?\n/);
    const i = lines.findIndex((l) => {
        const t = l.trim();
        return t !== '' && !t.startsWith('#') && !/^(cd|export)\s/.test(t);
    });
    return i < 0 ? undefined : i;
}
