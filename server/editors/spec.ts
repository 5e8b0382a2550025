/** What `takeback init <editor>` is given: its options (each editor reads its own) and this install. */
export interface EditorInitOptions {
  /** Take out exactly what init added. */
  remove?: boolean;
  /** Helix: the folder of its languages.toml. */
  configDir?: string;
  /** Helix: the Helix to ask for its languages. */
  hx?: string;
  /** JetBrains: where to write the LSP4IJ template folder. */
  dir?: string;
  /** The server program to write (tests). */
  command?: string;
}

/** This install of takeback, as an editor's config names it. */
export interface SelfInstall {
  /** The `takeback` script (bin/takeback.js), an absolute path. */
  bin: string;
  /** The package's root folder (where clients/ is). */
  packageRoot: string;
  /** A shell command line that runs `takeback serve` from this install. */
  serveCommand: string;
}

/**
 * What takeback knows of one editor it can set up: its name (`init NAME`) and the setup itself,
 * which resolves to what to tell the user (lines, each ending in a newline). One spec per editor
 * (helix-init.ts, jetbrains-init.ts, vscode-init.ts); editors whose client is a plugin loaded from
 * the package's folder (Neovim, Vim, Emacs) need no `init`.
 */
export interface EditorSpec {
  name: string;
  init(o: EditorInitOptions, self: SelfInstall): Promise<string>;
}
