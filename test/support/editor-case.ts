// What the tests of the Vim and Emacs clients share: a private folder per case, and the agent's
// change both replay (two open buffers, a file no buffer holds, a new file, a deletion).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { privateEditorEnv } from './editors.js';
import { makeWorkspace } from './nvim.js';

/** One case of an editor's tests: its private folder, the workspace inside it, the editor's environment. */
export interface EditorCase {
  /** Private folder of the case (created). */
  base: string;
  /** The workspace (a git repository), inside `base`. */
  workspace: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh case folder for `editor` (a name for the folder) with a workspace (git) holding `files` and a private TAKEBACK_HOME. */
export function newEditorCase(editor: string, label: string, files: Record<string, string>): EditorCase {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `takeback-${editor}-${label}-`)));
  const home = path.join(base, 'takeback-home');
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const env = privateEditorEnv(base, { TAKEBACK_HOME: home, LANG: 'C.UTF-8' });
  const workspace = makeWorkspace(path.join(base, 'work'), files);
  return { base, workspace, env };
}

/** The workspace before the agent's command. */
export const AGENT_BEFORE = {
  'notes.md': '# Notes\n\nThe quick brown fox.\n',
  'f.txt': 'a cat sat\n',
  'g.txt': 'not open\n',
  x: 'x contents\n',
};
/** The files the agent's command leaves (x is deleted). */
export const AGENT_AFTER = {
  'notes.md': '# Notes\n\nThe slow brown fox.\n',
  'f.txt': 'b cat sat\n',
  'g.txt': 'not open in the editor\n',
  'new.txt': 'made by the agent\n',
};
/** The agent's command. g.txt is never opened: its undo goes through a buffer the client loads for it. */
export const AGENT_COMMAND = "sed -i s/quick/slow/ notes.md && sed -i 's/^a/b/' f.txt && echo 'not open in the editor' > g.txt && echo 'made by the agent' > new.txt && rm x";
