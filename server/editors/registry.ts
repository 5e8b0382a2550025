import { helix } from './helix-init.js';
import { jetbrains } from './jetbrains-init.js';
import type { EditorSpec } from './spec.js';
import { vscode } from './vscode-init.js';

/** Every editor `takeback init NAME` sets up, by that name. */
export const EDITORS: Record<string, EditorSpec> = { helix, jetbrains, vscode };
