// The layers of takeback, checked by `npm test` (`npm run layers`): dependency-cruiser fails on an
// import that goes the wrong way and on any cycle, between modules or between folders.
//
//   protocol/                  the wire's types and method names; a client may depend on it alone
//   server/core/               the domain: journal, store, scan, capture, planner, gc
//   server/wire.ts             translates the domain's vocabulary to the protocol's
//   server/service/            operations on one workspace (list, show, capture, undo, doctor's journal part)
//   server/agents/             each agent's hook events and settings; runs capture through service
//   server/daemon/             the capture daemon: its sockets, its address files, its engine cache
//   server/editors/            each editor's setup (`init helix`, `init jetbrains`)
//   server/sidecar/            the JSON-RPC server for editors
//   server/cli/                the command line, which wires all of the above
//
// Within the top, agents may use the daemon (its address files and engine cache), never the
// other way: the daemon is handed the hook's handler by the command line.

/** Every folder of the server above the domain. */
const ABOVE_CORE = '^server/(service|cli|sidecar|daemon|agents|editors)/|^server/wire[.]ts$|^server/path-lookup[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'A cycle makes two modules one: neither can be read, tested or changed alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'Folders are the layers: two folders that import each other are one layer in two places.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'protocol-stands-alone',
      comment: 'protocol/ is what a client depends on: it must not pull in the server.',
      severity: 'error',
      from: { path: '^protocol/' },
      to: { path: '^server/' },
    },
    {
      name: 'core-speaks-no-lsp',
      comment: 'The domain knows nothing of JSON-RPC or LSP: the sidecar translates.',
      severity: 'error',
      from: { path: '^server/core/' },
      // Resolved (node_modules/…) or not (the bare name).
      to: { path: '(^|node_modules/)vscode-(jsonrpc|languageserver)($|[/-])' },
    },
    {
      name: 'core-owns-its-vocabulary',
      comment: 'The domain owns its types; wire.ts translates them to the protocol, not the other way.',
      severity: 'error',
      from: { path: '^server/core/' },
      to: { path: '^protocol/' },
    },
    {
      name: 'core-is-the-bottom',
      comment: 'The domain is used by every layer above it and uses none of them.',
      severity: 'error',
      from: { path: '^server/core/' },
      to: { path: ABOVE_CORE },
    },
    {
      name: 'wire-below-service',
      comment: 'wire.ts translates between core and protocol; only the layers above it use it.',
      severity: 'error',
      from: { path: '^server/wire[.]ts$' },
      to: { path: '^server/(service|cli|sidecar|daemon|agents|editors)/' },
    },
    {
      name: 'service-below-its-callers',
      comment: 'Service operations are what the command line, the sidecar and the agents call; they call none of them.',
      severity: 'error',
      from: { path: '^server/service/' },
      to: { path: '^server/(cli|sidecar|daemon|agents|editors)/' },
    },
    {
      name: 'agents-not-above-daemon',
      comment: 'Agents use the daemon (its address files, its engine cache); the command line and the editors and sidecar are not theirs to use.',
      severity: 'error',
      from: { path: '^server/agents/' },
      to: { path: '^server/(cli|sidecar|editors)/' },
    },
    {
      name: 'daemon-knows-no-agent',
      comment: 'The daemon carries hook events to the handler it is given; which agent sent one is not its business.',
      severity: 'error',
      from: { path: '^server/daemon/' },
      to: { path: '^server/(cli|sidecar|agents|editors|service)/' },
    },
    {
      name: 'editors-stand-alone',
      comment: "An editor's setup writes that editor's config; it needs no agent, daemon, sidecar or command line.",
      severity: 'error',
      from: { path: '^server/editors/' },
      to: { path: '^server/(cli|sidecar|daemon|agents|service)/' },
    },
    {
      name: 'sidecar-below-cli',
      comment: 'The sidecar serves editors through service; the command line starts it, and agents and the daemon are not its concern.',
      severity: 'error',
      from: { path: '^server/sidecar/' },
      to: { path: '^server/(cli|daemon|agents|editors)/' },
    },
    {
      name: 'nothing-uses-the-cli',
      comment: 'The command line is the top: it wires the rest, nothing below reaches up into it.',
      severity: 'error',
      from: { path: '^server/', pathNot: '^server/cli/' },
      to: { path: '^server/cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a layer that needs another's types depends on it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
