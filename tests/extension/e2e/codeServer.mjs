// The files and environment of one code-server for the end-to-end suite (run.mjs starts it on
// this machine, multinode.mjs on a namespace node): its folders under `base`, its config on
// `port`, VS Code's default settings but for what keeps a headless run quiet, plus `settings`.
import * as fs from 'node:fs';
import * as path from 'node:path';

export function codeServerSetup({ codeServer, node24, base, port, python, settings = {} }) {
    const dirs = Object.fromEntries(['config', 'data', 'cache', 'user', 'exts', 'run'].map((d) => [d, path.join(base, d)]));
    Object.values(dirs).forEach((d) => fs.mkdirSync(d, { recursive: true, mode: 0o700 }));
    const config = path.join(dirs.config, 'config.yaml');
    fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
    fs.mkdirSync(path.join(dirs.user, 'User'), { recursive: true });
    fs.writeFileSync(
        path.join(dirs.user, 'User', 'settings.json'),
        JSON.stringify(
            {
                'workbench.startupEditor': 'none',
                'update.mode': 'none',
                'extensions.autoUpdate': 'off',
                'chat.disableAIFeatures': true,
                'workbench.tips.enabled': false,
                'security.workspace.trust.enabled': false,
                'debug.openDebug': 'openOnDebugBreak',
                'rankdebug.python': python,
                'files.autoSave': 'off',
                ...settings,
            },
            null,
            2,
        ),
    );
    const env = {
        ...process.env,
        // A private XDG_RUNTIME_DIR: the job registry of this run, apart from other jobs on the machine.
        XDG_RUNTIME_DIR: dirs.run,
        PATH: `${node24}/bin:${process.env.PATH}`,
        XDG_CONFIG_HOME: dirs.config,
        XDG_DATA_HOME: dirs.data,
        XDG_CACHE_HOME: dirs.cache,
    };
    const node = path.join(node24, 'bin', 'node');
    const entry = path.join(codeServer, 'out', 'node', 'entry.js');
    const common = ['--config', config, '--user-data-dir', dirs.user, '--extensions-dir', dirs.exts];
    const serve = (ws) => [entry, ...common, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', '--ignore-last-opened', ws];
    return { dirs, env, node, install: (vsix) => [entry, ...common, '--install-extension', vsix, '--force'], serve };
}
