/**
 * A cheap guess whether an editor line belongs to a launch command, only to show or hide
 * the context-menu entry; the language server decides what the command really is.
 * The launcher words come from the Python side's table (generated: core/generated/launchers.ts).
 * No `vscode` import.
 */

import { LAUNCH_WORD } from './generated/launchers';


/** The logical line holding `line`: continuation lines (ending in `\`) joined. */
export function logicalLine(lines: readonly string[], line: number): string {
    let start = line;
    while (start > 0 && /\\\s*$/.test(lines[start - 1] ?? '')) start--;
    let end = line;
    while (end < lines.length - 1 && /\\\s*$/.test(lines[end] ?? '')) end++;
    return lines.slice(start, end + 1).join(' ');
}

/** Whether the logical line at `line` looks like it starts a program worth debugging. */
export function looksLikeLaunch(lines: readonly string[], line: number): boolean {
    const text = logicalLine(lines, line).replace(/^\s*(\$|>)\s+/, '');
    if (/^\s*#/.test(text)) return false;
    return LAUNCH_WORD.test(text) || /\.py(\s|$)/.test(text);
}
