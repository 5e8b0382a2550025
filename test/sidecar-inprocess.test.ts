// The sidecar and its clients in one process, over a pair of in-memory streams (no ports, no
// child processes for the server), with real temp folders and a real journal. The agent's turn
// goes through the hook handler in this process, on its own journal connection.
import { inProcessHook } from './support/agent-sim.js';
import { inProcess } from './support/lsp-client.js';
import { sidecarSuite } from './support/sidecar-suite.js';

sidecarSuite((ws, kind) => inProcess(ws.root, kind, ws.env), inProcessHook);
