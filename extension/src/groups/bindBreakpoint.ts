/** Bind Breakpoint to Ranks… (breakpointBinding.ts), with the VS Code host (vscodeHost.ts). */
import type { Execute } from '../core/rankCheck';
import type { JobState } from '../jobs/jobState';
import { BreakpointBinding } from './breakpointBinding';
import { bindHost } from './vscodeHost';

export class BreakpointBinder extends BreakpointBinding {
    constructor(execute: Execute, state: JobState) {
        super(bindHost, execute, state);
    }
}
