;;; takeback-tests.el --- takeback.el in a real Emacs, with the real sidecar  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/emacs-e2e.test.ts, one test per `emacs -Q --batch' with a workspace of its own:
;;   EMACS_TEST_PARAMS=params.json emacs -Q --batch -l takeback.el -l takeback-tests.el \
;;     --eval '(ert-run-tests-batch-and-exit "NAME")'
;; params.json: {"cmd": [node, bin/takeback.js, "serve"], "node", "bin", "workspace", "agent",
;; "before": {file: text}, "after": {file: text}}.  The agent's change is a shell command recorded
;; through the command line (`takeback run -- sh -c AGENT' in a turn), run while its files are open.

;;; Code:

(require 'ert)
(require 'json)
(require 'takeback)

(defvar takeback-tests--params
  (with-temp-buffer
    (insert-file-contents (getenv "EMACS_TEST_PARAMS"))
    (json-parse-buffer :object-type 'alist :array-type 'list)))

(defun takeback-tests--p (key) (alist-get key takeback-tests--params))
(defun takeback-tests--ws (rel) (expand-file-name rel (takeback-tests--p 'workspace)))
(defun takeback-tests--before (file) (alist-get (intern file) (takeback-tests--p 'before)))
(defun takeback-tests--after (file) (alist-get (intern file) (takeback-tests--p 'after)))

(defun takeback-tests--disk (rel)
  "The bytes of a workspace file as a string, or nil when it is not there."
  (let ((f (takeback-tests--ws rel)))
    (when (file-exists-p f)
      (with-temp-buffer
        (set-buffer-multibyte nil)
        (insert-file-contents-literally f)
        (buffer-string)))))

(defun takeback-tests--text (buffer)
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun takeback-tests--wait (what cond &optional seconds)
  "Wait until COND returns non-nil, handling the sidecar's messages meanwhile."
  (let ((deadline (+ (float-time) (or seconds 15))))
    (while (not (funcall cond))
      (when (> (float-time) deadline) (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.02))))

(defvar takeback-tests--reasons nil "The reasons of the sidecar's changes/didChange, oldest first.")
(add-hook 'takeback-changed-functions
          (lambda (_root reason) (setq takeback-tests--reasons (append takeback-tests--reasons (list reason)))))

(defun takeback-tests--wait-recorded (reason)
  (takeback-tests--wait (format "changes/didChange %s" reason) (lambda () (member reason takeback-tests--reasons)))
  (setq takeback-tests--reasons (remove reason takeback-tests--reasons)))

(defun takeback-tests--agent ()
  "Run the agent's shell command in the workspace, recorded by `takeback run' in a turn of its own
\(as an agent's work is, so that undo's last names it)."
  (let ((default-directory (file-name-as-directory (takeback-tests--p 'workspace))))
    (dolist (args `(("turn" "begin") ("run" "--" "sh" "-c" ,(takeback-tests--p 'agent)) ("turn" "end")))
      (with-temp-buffer
        (unless (eq 0 (apply #'call-process (takeback-tests--p 'node) nil t nil (takeback-tests--p 'bin) args))
          (error "The agent failed: %s" (buffer-string)))))))

(defun takeback-tests--journal ()
  "The journal's sets as ((ID . STATE) ...), newest first."
  (let ((default-directory (file-name-as-directory (takeback-tests--p 'workspace))))
    (with-temp-buffer
      (call-process (takeback-tests--p 'node) nil '(t nil) nil (takeback-tests--p 'bin) "list" "--json")
      (goto-char (point-min))
      (mapcar (lambda (s) (cons (alist-get 'id s) (alist-get 'state s)))
              (alist-get 'sets (json-parse-buffer :object-type 'alist :array-type 'list))))))

(defun takeback-tests--messages ()
  (with-current-buffer (messages-buffer) (buffer-string)))

(defun takeback-tests--setup ()
  "notes.md and f.txt open, the sidecar started, then the agent's change, and the buffers
reverted by the package when the sidecar says the journal changed.  Returns (NOTES F)."
  (setq takeback-command (takeback-tests--p 'cmd))
  (let ((default-directory (file-name-as-directory (takeback-tests--p 'workspace)))
        (notes (find-file-noselect (takeback-tests--ws "notes.md")))
        (f (find-file-noselect (takeback-tests--ws "f.txt"))))
    (set-buffer notes)
    (should (equal (append (plist-get (takeback-list) :sets) nil) nil))
    (sleep-for 1.1) ; the agent's writes get an mtime of their own
    (takeback-tests--agent)
    (takeback-tests--wait "the buffers reverted"
                          (lambda () (and (equal (takeback-tests--text notes) (takeback-tests--after "notes.md"))
                                          (equal (takeback-tests--text f) (takeback-tests--after "f.txt")))))
    (list notes f)))

(ert-deftest takeback-list-files ()
  "list names a `mv' once, at its new path, and a skipped folder the command changed beside the
files it changed."
  (setq takeback-command (takeback-tests--p 'cmd))
  (let ((default-directory (file-name-as-directory (takeback-tests--p 'workspace))))
    (with-current-buffer (find-file-noselect (takeback-tests--ws "notes.md"))
      (takeback-list)
      (takeback-tests--agent)
      (takeback-list)
      (with-current-buffer "*takeback*"
        (goto-char (point-min))
        (should (equal (aref (tabulated-list-get-entry) 3)
                       "b.txt +1 -0, node_modules +0 -0 (not kept: excluded), x → y (renamed)"))))))

(ert-deftest takeback-undo ()
  "list shows the change; preview diffs it; undo puts buffers and disk back; `undo' brings
the agent's change back."
  (pcase-let ((`(,notes ,f) (takeback-tests--setup)))
    (with-current-buffer notes
      ;; The listing: a row for the change, naming its files.
      (let ((list (takeback-list)))
        (should (equal (mapcar (lambda (s) (plist-get s :id)) (plist-get list :sets)) '("1"))))
      (with-current-buffer "*takeback*"
        (goto-char (point-min))
        (should (equal (tabulated-list-get-id) "1"))
        (should (string-match-p "notes\\.md \\+1 -1" (aref (tabulated-list-get-entry) 3)))
        ;; The preview of the change at point: a diff-mode buffer.
        (let ((p (takeback-preview)))
          (should (equal (plist-get p :sets) ["1"])))
        (with-current-buffer "*takeback-preview*"
          (should (eq major-mode 'diff-mode))
          ;; The change at point is named once.
          (should (string-prefix-p "# takeback: undo of change 1\n" (buffer-string)))
          (should (string-match-p (regexp-quote "-The slow brown fox.\n+The quick brown fox.") (buffer-string))))))
    (with-current-buffer notes
      (let ((r (takeback-undo)))
        (should (eq (plist-get r :written) t))
        (should (equal (plist-get r :conflicts) []))
        (should (equal (sort (mapcar (lambda (a) (format "%s:%s" (plist-get a :path) (plist-get a :via))) (plist-get r :applied)) #'string<)
                       '("f.txt:editor" "g.txt:editor" "new.txt:disk" "notes.md:editor" "x:disk")))))
    (should (string-match-p "takeback: undid the last change (change 1): .*new\\.txt (removed)" (takeback-tests--messages)))
    ;; Byte for byte, in the buffers (saved) and on disk.
    (dolist (pair `((,notes . "notes.md") (,f . "f.txt")))
      (should (equal (takeback-tests--text (car pair)) (takeback-tests--before (cdr pair))))
      (should-not (buffer-modified-p (car pair)))
      (should (equal (takeback-tests--disk (cdr pair)) (takeback-tests--before (cdr pair)))))
    (should (equal (takeback-tests--disk "x") (takeback-tests--before "x")))
    (should (equal (takeback-tests--disk "g.txt") (takeback-tests--before "g.txt")))
    (should-not (takeback-tests--disk "new.txt"))
    ;; The sidecar records the undo once the buffers are saved.
    (takeback-tests--wait-recorded "undone")
    (should (equal (takeback-tests--journal) '(("1" . "undone"))))
    ;; The editor's own undo brings the agent's change back into each buffer, unsaved.
    (dolist (pair `((,notes . "notes.md") (,f . "f.txt")))
      (with-current-buffer (car pair)
        (let ((last-command nil)) (undo))
        (should (equal (takeback-tests--text (car pair)) (takeback-tests--after (cdr pair))))
        (should (buffer-modified-p)))
      (should (equal (takeback-tests--disk (cdr pair)) (takeback-tests--before (cdr pair)))))
    (takeback-stop)))

(ert-deftest takeback-merge-unsaved ()
  "A buffer with unsaved text on other lines than the agent's gets the undo
merged into it, not saved (the person's to save); C-x C-s records the undo."
  (pcase-let ((`(,notes ,_f) (takeback-tests--setup)))
    (with-current-buffer notes
      (goto-char (point-min))
      (delete-region (point) (line-end-position))
      (insert "# My notes"))
    (let ((r (with-current-buffer notes (takeback-undo))))
      (should (eq (plist-get r :written) t))
      (should (equal (plist-get r :conflicts) [])))
    (should (string-match-p (regexp-quote "put back in the buffer, keeping your unsaved changes: C-x C-s notes.md to finish")
                            (takeback-tests--messages)))
    (let ((merged (replace-regexp-in-string "# Notes" "# My notes" (takeback-tests--before "notes.md") t t)))
      (should (equal (takeback-tests--text notes) merged))
      (should (buffer-modified-p notes))
      ;; Nothing under the buffer: the disk keeps the agent's bytes, the journal the change.
      (should (equal (takeback-tests--disk "notes.md") (takeback-tests--after "notes.md")))
      (should (equal (takeback-tests--journal) '(("1" . "applied"))))
      (with-current-buffer notes (save-buffer))
      (takeback-tests--wait-recorded "undone")
      (should (equal (takeback-tests--disk "notes.md") merged))
      (should (equal (takeback-tests--journal) '(("1" . "undone")))))
    (takeback-stop)))

(ert-deftest takeback-conflict ()
  "A buffer with unsaved text next to the agent's line is a conflict, named
with the lines of both sides, and nothing is written; C-u replaces it."
  (pcase-let ((`(,notes ,f) (takeback-tests--setup)))
    (with-current-buffer notes
      (goto-char (point-max))
      (insert "my own line\n"))
    ;; g.txt (not open) is edited outside takeback.
    (let ((coding-system-for-write 'no-conversion))
      (write-region "edited outside\n" nil (takeback-tests--ws "g.txt") nil 'silent))
    (let ((r (with-current-buffer notes (takeback-undo))))
      (should-not (eq (plist-get r :written) t))
      (should (equal (mapcar (lambda (c) (list (plist-get c :path) (plist-get c :reason))) (plist-get r :conflicts))
                     '(("g.txt" "changed-since") ("notes.md" "unsaved-in-editor")))))
    ;; Each file with its reason once and who changed it, then what to do.
    (should (string-match-p (regexp-quote (concat "takeback: nothing undone for the last change: "
                                                  "g.txt changed since outside takeback: line 1 changed by the agent and line 1 since; "
                                                  "notes.md unsaved in Emacs: line 3 changed by the agent and line 4 since. C-u M-x takeback-undo replaces later changes"))
                            (takeback-tests--messages)))
    ;; Nothing written anywhere.
    (should (equal (takeback-tests--text notes) (concat (takeback-tests--after "notes.md") "my own line\n")))
    (should (buffer-modified-p notes))
    (should (equal (takeback-tests--text f) (takeback-tests--after "f.txt")))
    (should (equal (takeback-tests--disk "g.txt") "edited outside\n"))
    (dolist (file '("notes.md" "f.txt" "new.txt"))
      (should (equal (takeback-tests--disk file) (takeback-tests--after file))))
    (should-not (takeback-tests--disk "x"))
    (should (equal (takeback-tests--journal) '(("1" . "applied"))))
    ;; Forced: the buffer and the disk go back, the user's line with them.
    (let ((r (with-current-buffer notes (takeback-undo nil t))))
      (should (eq (plist-get r :written) t))
      (should (eq (plist-get r :forced) t)))
    (should (equal (takeback-tests--text notes) (takeback-tests--before "notes.md")))
    (should-not (buffer-modified-p notes))
    (should (equal (takeback-tests--disk "notes.md") (takeback-tests--before "notes.md")))
    (should (equal (takeback-tests--disk "f.txt") (takeback-tests--before "f.txt")))
    (takeback-tests--wait-recorded "undone")
    (takeback-stop)))

(ert-deftest takeback-combined ()
  "A save of the person's over the agent's line: undoing the agent's change alone is
refused, naming the save, with the undo of both as this package runs it, which goes through."
  (pcase-let ((`(,notes ,_f) (takeback-tests--setup)))
    (with-current-buffer notes
      (goto-char (point-min))
      (should (search-forward "The slow brown fox." nil t))
      (replace-match "The grey brown fox." t t)
      (save-buffer))
    (takeback-tests--wait-recorded "recorded")
    (should (equal (takeback-tests--journal) '(("2" . "applied") ("1" . "applied"))))
    (let ((r (with-current-buffer notes (takeback-undo '(:ids ["1"])))))
      (should-not (eq (plist-get r :written) t))
      (should (equal (mapcar (lambda (c) (list (plist-get c :path) (plist-get c :combined))) (plist-get r :conflicts))
                     '(("notes.md" ["1" "2"])))))
    (should (string-match-p (regexp-quote (concat "takeback: nothing undone for change 1: notes.md changed since by #2 (saved in Emacs): "
                                                  "line 3 changed by the agent and line 3 since — "
                                                  "M-: (takeback-undo '(:ids [\"1\" \"2\"])) takes both back. "
                                                  "C-u M-x takeback-undo replaces later changes"))
                            (takeback-tests--messages)))
    (should (equal (takeback-tests--disk "notes.md") (replace-regexp-in-string "slow" "grey" (takeback-tests--after "notes.md"))))
    ;; What it says to do works: both go back, buffers and disk.
    (let ((r (with-current-buffer notes (takeback-undo '(:ids ["1" "2"])))))
      (should (eq (plist-get r :written) t)))
    (should (equal (takeback-tests--text notes) (takeback-tests--before "notes.md")))
    (should (equal (takeback-tests--disk "notes.md") (takeback-tests--before "notes.md")))
    (takeback-tests--wait-recorded "undone")
    (takeback-stop)))

;; Its own workspace: crlf.txt "one\r\ntwo\r\n" and noeol.txt "alpha\nbeta"; the agent
;; upcases a word in each.
(ert-deftest takeback-redo ()
  "Undo and redo keep CRLF line ends and a missing final newline byte for byte."
  (setq takeback-command (takeback-tests--p 'cmd))
  (let* ((default-directory (file-name-as-directory (takeback-tests--p 'workspace)))
         (crlf (find-file-noselect (takeback-tests--ws "crlf.txt")))
         (noeol (find-file-noselect (takeback-tests--ws "noeol.txt"))))
    (should (eq (coding-system-eol-type (buffer-local-value 'buffer-file-coding-system crlf)) 1))
    (set-buffer crlf)
    (takeback-list)
    (sleep-for 1.1)
    (takeback-tests--agent)
    (takeback-tests--wait "the buffers reverted"
                          (lambda () (and (equal (takeback-tests--text crlf) "one\nTWO\n")
                                          (equal (takeback-tests--text noeol) "alpha\nBETA"))))
    (let ((r (takeback-undo)))
      (should (equal (sort (mapcar (lambda (a) (format "%s:%s" (plist-get a :path) (plist-get a :via))) (plist-get r :applied)) #'string<)
                     '("crlf.txt:editor" "noeol.txt:editor"))))
    (takeback-tests--wait-recorded "undone")
    (should (equal (takeback-tests--disk "crlf.txt") "one\r\ntwo\r\n"))
    (should (equal (takeback-tests--disk "noeol.txt") "alpha\nbeta"))
    (should (equal (takeback-tests--text noeol) "alpha\nbeta"))
    (let ((r (takeback-redo)))
      (should (eq (plist-get r :written) t)))
    (takeback-tests--wait-recorded "redone")
    (should (equal (takeback-tests--disk "crlf.txt") "one\r\nTWO\r\n"))
    (should (equal (takeback-tests--disk "noeol.txt") "alpha\nBETA"))
    (should (equal (takeback-tests--text crlf) "one\nTWO\n"))
    (should-not (buffer-modified-p crlf))
    (should (equal (takeback-tests--journal) '(("1" . "applied"))))
    (takeback-stop)))

;; Its own workspace: code.txt of twenty lines "line N"; the agent changes line 12.
(ert-deftest takeback-redo-in-place ()
  "A redo the sidecar writes on disk while the buffer already holds its text (`undo' after
takeback's undo brought the agent's text back, unsaved) leaves the buffer unmodified and in
line with the file, so that the next edit or save does not take it for a file changed behind
its back."
  (setq takeback-command (takeback-tests--p 'cmd))
  (let* ((default-directory (file-name-as-directory (takeback-tests--p 'workspace)))
         (code (find-file-noselect (takeback-tests--ws "code.txt")))
         (after (takeback-tests--after "code.txt")))
    (set-buffer code)
    (takeback-list)
    (sleep-for 1.1)
    (takeback-tests--agent)
    (takeback-tests--wait "the buffer reverted" (lambda () (equal (takeback-tests--text code) after)))
    (takeback-undo)
    (takeback-tests--wait-recorded "undone")
    (with-current-buffer code
      (let ((last-command nil)) (undo))
      (should (equal (takeback-tests--text code) after))
      (should (buffer-modified-p)))
    (let ((r (takeback-redo)))
      (should (eq (plist-get r :written) t))
      (should (equal (mapcar (lambda (a) (plist-get a :via)) (plist-get r :applied)) '("disk"))))
    (takeback-tests--wait-recorded "redone")
    (should (equal (takeback-tests--disk "code.txt") after))
    (should (equal (takeback-tests--text code) after))
    (should-not (buffer-modified-p code))
    (should (verify-visited-file-modtime code))
    (should (equal (takeback-tests--journal) '(("1" . "applied"))))
    (takeback-stop)))

(ert-deftest takeback-preview-hunk-at-point ()
  "The hunk at point of a preview: its file and the lines of the file now it changes, by the
counts of its header, so that the next file's `---' and `+++' lines are not taken for its own."
  (with-temp-buffer
    (insert "--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
            "@@ -10,2 +10,4 @@\n j\n+new1\n+new2\n k\n"
            "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-made\n\\ No newline at end of file\n"
            "--- a/y.txt\n+++ b/y.txt\n@@ -0,0 +1 @@\n+only\n")
    (diff-mode)
    (let ((at (lambda (text) (goto-char (point-min)) (search-forward text) (takeback--preview-hunk-at-point))))
      (should (equal (funcall at " c") '("x.txt" 2 2)))
      (should (equal (funcall at "@@ -1,3") '("x.txt" 2 2)))
      ;; Lines only added: the line before which they go.
      (should (equal (funcall at "+new2") '("x.txt" 11 11)))
      (should (equal (funcall at " k") '("x.txt" 11 11)))
      ;; A file the step removes has no hunk to take alone; nor has a file's header.
      (should-not (funcall at "-made"))
      (should-not (funcall at "+++ b/y.txt"))
      (should (equal (funcall at "+only") '("y.txt" 1 1))))))

;; Its own workspace: code.txt of twenty lines "line N"; the agent changes lines 3 and 15 (two
;; hunks).  The person then adds two lines above them and saves.
(ert-deftest takeback-hunks ()
  "Per hunk: `takeback-undo-hunk' at point in the file, then C-c C-u on a hunk of the
preview, each only that hunk, through the buffer as one undo group each: `undo' brings back
the last one alone."
  (setq takeback-command (takeback-tests--p 'cmd))
  (let* ((default-directory (file-name-as-directory (takeback-tests--p 'workspace)))
         (code (find-file-noselect (takeback-tests--ws "code.txt")))
         (before (takeback-tests--before "code.txt"))
         (mine "// mine 1\n// mine 2\n")
         (line-of (lambda (text) (with-current-buffer code
                                   (save-excursion (goto-char (point-min))
                                                   (search-forward text)
                                                   (line-number-at-pos))))))
    (set-buffer code)
    (takeback-list)
    (sleep-for 1.1)
    (takeback-tests--agent)
    (takeback-tests--wait "the buffer reverted"
                          (lambda () (equal (takeback-tests--text code) (takeback-tests--after "code.txt"))))
    (with-current-buffer code
      (goto-char (point-min))
      (insert mine)
      (let ((require-final-newline nil)) (save-buffer)))
    (should (equal (takeback-tests--disk "code.txt") (concat mine (takeback-tests--after "code.txt"))))
    ;; The agent's line 3 is line 5 now, its line 15 line 17.
    (should (= (funcall line-of "agent 3") 5))
    (should (= (funcall line-of "agent 15") 17))

    ;; On a line of no hunk of the agent's: nothing.
    (with-current-buffer code
      (goto-char (point-min))
      (forward-line 9)
      (should-not (takeback-undo-hunk)))
    (should (string-match-p "takeback: no change of the agent's is at line 10 of code\\.txt" (takeback-tests--messages)))
    (should (equal (takeback-tests--disk "code.txt") (concat mine (takeback-tests--after "code.txt"))))

    ;; At point on the agent's line 5: that hunk only, saved; the change is partial.
    (with-current-buffer code
      (goto-char (point-min))
      (forward-line 4)
      (let ((r (takeback-undo-hunk)))
        (should (eq (plist-get r :written) t))
        (should (equal (plist-get r :sets) ["1"]))))
    ;; Each id once: the selector names the change already.
    (should (string-match-p "takeback: undid change 1 to code\\.txt at line 5: code\\.txt$" (takeback-tests--messages)))
    (takeback-tests--wait-recorded "undone")
    (let ((one-back (concat mine (replace-regexp-in-string "^agent 3$" "line 3" (takeback-tests--after "code.txt")))))
      (should (equal (takeback-tests--text code) one-back))
      (should-not (buffer-modified-p code))
      (should (equal (takeback-tests--disk "code.txt") one-back)))
    ;; The person's save of their own lines above is a set of its own (2), the agent's change partial.
    (should (equal (takeback-tests--journal) '(("2" . "applied") ("1" . "partial"))))

    ;; The preview shows the other hunk, at its line now; C-c C-u on it takes it back.
    (with-current-buffer code (takeback-preview))
    (with-current-buffer "*takeback-preview*"
      (should (bound-and-true-p takeback-preview-mode))
      (should (string-match-p "^@@ -14,7 \\+14,7 @@" (buffer-string)))
      (should-not (string-match-p "agent 3" (buffer-string)))
      (goto-char (point-min))
      (search-forward "-agent 15")
      (let ((r (call-interactively (key-binding (kbd "C-c C-u")))))
        (should (eq (plist-get r :written) t)))
      ;; Shown again: nothing left to undo.
      (should-not (string-match-p "agent 15" (buffer-string))))
    (takeback-tests--wait-recorded "undone")
    (should (equal (takeback-tests--text code) (concat mine before)))
    (should (equal (takeback-tests--disk "code.txt") (concat mine before)))
    (should (equal (takeback-tests--journal) '(("2" . "applied") ("1" . "undone"))))

    ;; Each hunk came as an undo group of its own: `undo' brings back the last one alone.
    (with-current-buffer code
      (let ((last-command nil)) (undo))
      (should (equal (takeback-tests--text code)
                     (concat mine (replace-regexp-in-string "^line 15$" "agent 15" before))))
      (should (buffer-modified-p)))
    (takeback-stop)))

;;; takeback-tests.el ends here
