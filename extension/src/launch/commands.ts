/**
 * Debug Training Command (editor context menu, code lens, terminal selection, command
 * palette) and Generate launch.json (trainingCommand.ts), with the VS Code host (vscodeHost.ts).
 */
import * as flow from './trainingCommand';
import type { CommandSource, Context } from './trainingCommand';
import { commandHost } from './vscodeHost';

export { planArg, type CommandSource, type Context } from './trainingCommand';

export function sourceFromArgs(args: unknown[]): Promise<CommandSource | undefined> {
    return flow.sourceFromArgs(commandHost, args);
}

export function saveIfDirty(src: CommandSource): Promise<void> {
    return flow.saveIfDirty(commandHost, src);
}

export function debugCommand(ctx: Context, args: unknown[], options: { alwaysPick?: boolean } = {}): Promise<boolean> {
    return flow.debugCommand(commandHost, ctx, args, options);
}

export function debugTerminalSelection(ctx: Context): Promise<boolean> {
    return flow.debugTerminalSelection(commandHost, ctx);
}

export function generateLaunchJson(ctx: Context, args: unknown[]): Promise<void> {
    return flow.generateLaunchJson(commandHost, ctx, args);
}
