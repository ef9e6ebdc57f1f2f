/**
 * Merging configurations and compounds into the text of `.vscode/launch.json`, keeping the
 * user's comments and formatting (jsonc-parser edits). No `vscode` import.
 */
import { applyEdits, modify, parse, type FormattingOptions, type ParseError } from 'jsonc-parser';

export interface Named {
    name: string;
    [key: string]: unknown;
}

export interface MergeResult {
    text: string;
    added: string[];
    replaced: string[];
}

const EMPTY = '{\n\t// Written by Rank Debugger; add your own configurations freely.\n\t"version": "0.2.0",\n\t"configurations": []\n}\n';

/**
 * Merges `configurations` and `compounds` into `text` (empty or missing: a new file).
 * Steps: parse leniently; for each entry, replace the one with the same `name` in place or
 * append it; every change is a minimal jsonc edit, so comments elsewhere survive.
 * Throws when the text is not JSON with comments at all.
 */
export function mergeLaunchJson(
    text: string | undefined,
    configurations: readonly Named[],
    compounds: readonly Named[] = [],
    formatting: FormattingOptions = { insertSpaces: false, tabSize: 4, eol: '\n' },
): MergeResult {
    let current = text && text.trim() ? text : EMPTY;
    const errors: ParseError[] = [];
    const root = parse(current, errors, { allowTrailingComma: true, disallowComments: false });
    if (errors.length || typeof root !== 'object' || root === null || Array.isArray(root)) {
        throw new Error('launch.json is not a JSON object');
    }
    const added: string[] = [];
    const replaced: string[] = [];
    if ((root as Record<string, unknown>).version === undefined) {
        current = applyEdits(current, modify(current, ['version'], '0.2.0', { formattingOptions: formatting }));
    }
    const apply = (key: 'configurations' | 'compounds', items: readonly Named[]): void => {
        if (!items.length) return;
        for (const item of items) {
            const doc = parse(current, [], { allowTrailingComma: true }) as Record<string, unknown>;
            const list = Array.isArray(doc[key]) ? (doc[key] as unknown[]) : undefined;
            if (list === undefined) {
                current = applyEdits(current, modify(current, [key], [item], { formattingOptions: formatting }));
                added.push(item.name);
                continue;
            }
            const index = list.findIndex((c) => typeof c === 'object' && c !== null && (c as Named).name === item.name);
            if (index >= 0) {
                current = applyEdits(current, modify(current, [key, index], item, { formattingOptions: formatting }));
                replaced.push(item.name);
            } else {
                current = applyEdits(
                    current,
                    modify(current, [key, list.length], item, { formattingOptions: formatting, isArrayInsertion: true }),
                );
                added.push(item.name);
            }
        }
    };
    apply('configurations', configurations);
    apply('compounds', compounds);
    return { text: current, added, replaced };
}
