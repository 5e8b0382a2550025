// Part 1 of 3 of the property test of undo and redo against a model of the tree: its share of the
// one fixed-seed stream of cases (test/support/undo-property.ts says what is checked and how the
// cases are shared out).
import { describePropertyPart } from './support/undo-property.js';

describePropertyPart(1);
