/**
 * The `attach` request's resolver: `connect` goes straight to one rank's debugpy; `job` (default
 * the newest job `rankdebug launch` supervises) with `ranks` becomes a parent session over those
 * ranks of the job, as `rankdebug jobs --json` lists it (`__attach`).
 */
import type * as vscode from 'vscode';
import { registryRanks, specText } from '../core/debugPlan';
import { findJob } from '../core/jobs';
import type { JobInfo } from '../core/jobList';
import { CHECK_RANKS, type CheckRanksReply } from '../core/rankCheck';
import { isPlanError, plainRankList } from '../core/ranks';
import type { CommandServer, ConfigurationResolver, RankdebugConfiguration } from './configuration';
import type { ResolverHost } from './host';

export class AttachResolver implements ConfigurationResolver {
    constructor(
        private readonly server: CommandServer,
        private readonly host: ResolverHost,
    ) {}

    async resolve(_folder: vscode.WorkspaceFolder | undefined, config: RankdebugConfiguration): Promise<RankdebugConfiguration> {
        const { l10n } = this.host;
        config.justMyCode ??= this.host.justMyCode();
        if (config.connect) {
            if (!config.connect.port) throw new Error(l10n.t('"connect" needs a "port"'));
            return config;
        }
        const job = findJob(config.job ?? 'latest', await this.host.listJobs());
        if (!job) throw new Error(config.job ? l10n.t('no running job {0}', config.job) : l10n.t('no running training job was found'));
        const entries = job.ranks.filter((r) => typeof r.port === 'number' && r.port > 0 && r.state !== 'exited');
        const wanted = await this.attachRanks(config, job, entries.map((r) => r.rank));
        const ranks = entries.filter((r) => wanted.includes(r.rank)).map((r) => ({ rank: r.rank, host: r.address ?? '127.0.0.1', port: r.port as number }));
        if (!ranks.length) throw new Error(l10n.t('no rank of job {0} is listening for a debugger', job.id));
        // A `rank N` configuration (the server's per-rank ones, in launch.json) connects to its rank directly.
        if (ranks.length === 1 && config.name.startsWith('rank ')) {
            config.connect = { host: ranks[0].host, port: ranks[0].port };
            return config;
        }
        config.__attach = {
            job: job.id,
            supervisorPid: job.launcherPid ?? undefined,
            dir: job.dir ?? undefined,
            ranks,
            worldSize: job.worldSize,
            title: job.launcher,
        };
        return config;
    }

    /**
     * The ranks of a running job an attach configuration names (default: every listening rank),
     * read by the server (`rankdebug.checkRanks`). Only when the server cannot run, a plain list
     * of rank numbers is read here (core/ranks.ts `plainRankList`).
     */
    private async attachRanks(config: RankdebugConfiguration, job: JobInfo, listening: readonly number[]): Promise<readonly number[]> {
        const spec = specText(config.ranks);
        if (spec === undefined) return listening;
        let reply: CheckRanksReply;
        try {
            reply = await this.server.execute<CheckRanksReply>(CHECK_RANKS, { spec, ranks: registryRanks(job), worldSize: job.worldSize });
        } catch (e) {
            const plain = plainRankList(spec);
            if (!plain) throw e;
            return plain;
        }
        if (isPlanError(reply)) throw new Error(reply.error.message);
        if (reply.ranks === null) throw new Error(this.host.l10n.t('which ranks "{0}" names in job {1} is not known here; give rank numbers', spec, job.id));
        return reply.ranks;
    }
}
