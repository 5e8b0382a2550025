;;; takeback.el --- Undo for AI coding agents  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1") (jsonrpc "1.0.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; takeback records every change an AI coding agent makes to your files (per
;; tool call and per turn) and lets you preview, undo and redo them.  This
;; package talks to `takeback serve' with Emacs's own jsonrpc.el: one sidecar
;; per workspace (the top of the git work tree around the file), started on
;; first use.  It is not an Eglot server, so the language server Eglot runs for
;; a buffer stays as it is.
;;
;; M-x takeback-list     the journal, a turn and a change per row
;; M-x takeback-preview  what an undo would do, in a `diff-mode' buffer
;; M-x takeback-undo     undo the last change (C-u: replace later changes)
;; M-x takeback-redo     redo it
;; M-x takeback-undo-hunk  undo only the agent's hunk at point (or the region's lines)
;; C-c C-u               in the preview buffer: undo only the hunk at point
;;
;; The sidecar plans every step; this package applies the text edits it sends
;; (`workspace/applyEdit') to the buffers, one undo group per file, so `undo'
;; brings the agent's change back, and saves them as the agent did.  Open
;; buffers are sent as documents before each request, so unsaved text counts:
;; on other lines than the agent's, the undo is merged into the buffer, which
;; is left for the person to save; on the agent's lines it is a conflict: it is
;; named, and nothing is written anywhere.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'tabulated-list)
(require 'diff-mode)
(require 'url-util)

(defgroup takeback nil
  "Undo for AI coding agents."
  :group 'tools
  :prefix "takeback-")

(defcustom takeback-command '("takeback" "serve")
  "The sidecar's command and its arguments."
  :type '(repeat string))

(defcustom takeback-request-timeout 30
  "Seconds to wait for the sidecar's answer."
  :type 'number)

(defvar takeback--connections (make-hash-table :test #'equal)
  "Workspace root (a folder name without a final slash) -> its jsonrpc
connection.")

(defvar takeback-changed-functions nil
  "Run with two arguments, ROOT and REASON, when the sidecar says the journal
changed. REASON is \"recorded\", \"undone\", \"redone\" or \"external\".
Unmodified buffers whose file changed on disk are reverted first.")

(defvar takeback-applied-hook nil
  "Run after an undo or redo, with one argument: a plist (:direction :selector
:result :error :root). RESULT is the sidecar's ApplyResult as a plist, ERROR
its error message or nil.")

(defvar-local takeback--list-root nil "The workspace a `*takeback*' buffer lists.")

;;;; Files, workspaces, URIs

(defun takeback--root (&optional file)
  "The workspace of FILE (or of `default-directory'): the top of the git work
tree around it, else its folder."
  (let* ((dir (file-truename (file-name-directory (expand-file-name (or file default-directory)))))
         (top (locate-dominating-file dir ".git")))
    (directory-file-name (file-truename (or top dir)))))

(defun takeback--buffer-file (buffer)
  "The true name of the file BUFFER visits, or nil."
  (let ((f (buffer-file-name buffer)))
    (and f (file-truename f))))

(defun takeback--relative (root file)
  "FILE relative to ROOT, or nil when it is not inside it."
  (and file (string-prefix-p (concat root "/") file) (substring file (1+ (length root)))))

(defun takeback--uri (file)
  "A file: URI for FILE, every byte outside the unreserved set and /
percent-encoded."
  (concat "file://"
          (mapconcat (lambda (byte)
                       (if (or (and (>= byte ?a) (<= byte ?z)) (and (>= byte ?A) (<= byte ?Z))
                               (and (>= byte ?0) (<= byte ?9)) (memq byte '(?/ ?. ?_ ?~ ?-)))
                           (string byte)
                         (format "%%%02X" byte)))
                     (encode-coding-string file 'utf-8) "")))

(defun takeback--uri-file (uri)
  "The file name of a file: URI."
  (decode-coding-string (url-unhex-string (replace-regexp-in-string "\\`file://" "" uri)) 'utf-8))

(defun takeback--file-buffer (file)
  "The live buffer visiting FILE (a true name), or nil."
  (cl-find-if (lambda (b) (equal (takeback--buffer-file b) file)) (buffer-list)))

;;;; Buffers as documents

(defun takeback--dos-p ()
  "Whether the current buffer's file has CRLF line ends."
  (eq (coding-system-eol-type buffer-file-coding-system) 1))

(defun takeback--text ()
  "The current buffer's text as the lines of its file: CRLF line ends where the
file has them."
  (let ((text (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))
    (if (takeback--dos-p) (replace-regexp-in-string "\n" "\r\n" text) text)))

(defun takeback--docs (conn)
  "The documents CONN was told of: buffer -> the version sent."
  (let ((proc (jsonrpc--process conn)))
    (or (process-get proc 'takeback-docs)
        (let ((docs (make-hash-table :test #'eq)))
          (process-put proc 'takeback-docs docs)
          docs))))

(defun takeback--conn-root (conn)
  (process-get (jsonrpc--process conn) 'takeback-root))

(defun takeback--sync-buffer (conn buffer)
  "Tell the sidecar of CONN what BUFFER holds: didOpen the first time,
didChange when it changed since."
  (let ((file (takeback--buffer-file buffer))
        (docs (takeback--docs conn)))
    (when (and file (takeback--relative (takeback--conn-root conn) file) (buffer-live-p buffer))
      (with-current-buffer buffer
        (let ((version (buffer-modified-tick))
              (sent (gethash buffer docs)))
          (cond ((null sent)
                 (jsonrpc-notify conn :textDocument/didOpen
                                 (list :textDocument (list :uri (takeback--uri file)
                                                           :languageId (replace-regexp-in-string "-mode\\'" "" (symbol-name major-mode))
                                                           :version version :text (takeback--text))))
                 (puthash buffer version docs))
                ((/= sent version)
                 (jsonrpc-notify conn :textDocument/didChange
                                 (list :textDocument (list :uri (takeback--uri file) :version version)
                                       :contentChanges (vector (list :text (takeback--text)))))
                 (puthash buffer version docs))))))))

(defun takeback--sync-all (conn)
  (dolist (b (buffer-list)) (takeback--sync-buffer conn b)))

(defun takeback--conn-of-buffer (buffer)
  (let ((file (takeback--buffer-file buffer)) found)
    (when file
      (maphash (lambda (root conn) (when (takeback--relative root file) (setq found conn))) takeback--connections))
    found))

(defun takeback--after-save ()
  (let ((conn (takeback--conn-of-buffer (current-buffer))))
    (when (and conn (jsonrpc-running-p conn))
      (takeback--sync-buffer conn (current-buffer))
      (jsonrpc-notify conn :textDocument/didSave
                      (list :textDocument (list :uri (takeback--uri (takeback--buffer-file (current-buffer)))))))))

(defun takeback--kill-buffer ()
  (let ((conn (takeback--conn-of-buffer (current-buffer))))
    (when (and conn (jsonrpc-running-p conn) (gethash (current-buffer) (takeback--docs conn)))
      (remhash (current-buffer) (takeback--docs conn))
      (jsonrpc-notify conn :textDocument/didClose
                      (list :textDocument (list :uri (takeback--uri (takeback--buffer-file (current-buffer)))))))))

(defun takeback--revert (buffer)
  "Read BUFFER's file again, as an undo group of its own (`undo' takes the
reload back)."
  (with-current-buffer buffer
    (undo-boundary)
    (revert-buffer t t t)
    (undo-boundary)))

(defun takeback--reload (root)
  "Reload the unmodified buffers of ROOT whose file changed on disk (an agent
wrote it). Modified buffers are the user's: the sidecar reports them as
conflicts."
  (dolist (b (buffer-list))
    (let ((file (takeback--buffer-file b)))
      (when (and file (takeback--relative root file) (not (buffer-modified-p b)) (file-readable-p file)
                 (not (with-current-buffer b (verify-visited-file-modtime b))))
        (takeback--revert b)))))

;;;; workspace/applyEdit

(defun takeback--position (pos)
  "The point of an LSP position (line and character; characters here, which
differ from UTF-16 units only after a character outside the Basic Multilingual
Plane)."
  (save-excursion
    (goto-char (point-min))
    (if (> (forward-line (plist-get pos :line)) 0)
        (point-max)
      (min (+ (point) (plist-get pos :character)) (line-end-position)))))

(defun takeback--apply-text-edits (edits)
  "Apply LSP TextEdits (a vector) to the current buffer as one undo group."
  (let ((dos (takeback--dos-p))
        (spans (mapcar (lambda (e)
                         (let ((r (plist-get e :range)))
                           (list (takeback--position (plist-get r :start))
                                 (takeback--position (plist-get r :end))
                                 (plist-get e :newText))))
                       edits)))
    (save-excursion
      (save-restriction
        (widen)
        (undo-boundary)
        (dolist (s (sort spans (lambda (a b) (> (car a) (car b)))))
          (goto-char (nth 0 s))
          (delete-region (nth 0 s) (nth 1 s))
          (insert (if dos (replace-regexp-in-string "\r\n" "\n" (nth 2 s)) (nth 2 s))))
        (undo-boundary)))))

(defun takeback--edits-by-file (edit)
  "The text edits of a WorkspaceEdit by file: its `changes' and the text edits
of `documentChanges'."
  (let (out)
    (cl-loop for (uri edits) on (plist-get edit :changes) by #'cddr
             do (push (cons (takeback--uri-file (substring (symbol-name uri) 1)) edits) out))
    (cl-loop for change across (or (plist-get edit :documentChanges) [])
             when (plist-get change :textDocument)
             do (push (cons (takeback--uri-file (plist-get (plist-get change :textDocument) :uri))
                            (plist-get change :edits))
                      out))
    (nreverse out)))

(defun takeback--apply-edit (conn params)
  "Apply a WorkspaceEdit through the buffers (visiting files that are not),
then tell the sidecar what each buffer holds before answering, so it can check
what landed."
  (let (buffers)
    (condition-case err
        (progn
          (dolist (pair (takeback--edits-by-file (plist-get params :edit)))
            (let ((b (or (takeback--file-buffer (file-truename (car pair)))
                         (find-file-noselect (car pair)))))
              (with-current-buffer b (takeback--apply-text-edits (cdr pair)))
              (push b buffers)))
          (dolist (b buffers) (takeback--sync-buffer conn b))
          (list :applied t))
      (error
       (dolist (b buffers) (takeback--sync-buffer conn b))
       (list :applied :json-false :failureReason (error-message-string err))))))

;;;; The sidecar

(defun takeback--dispatch-request (conn method params)
  (if (eq method 'workspace/applyEdit)
      (takeback--apply-edit conn params)
    (signal 'jsonrpc-error `((jsonrpc-error-code . -32601)
                             (jsonrpc-error-message . ,(format "not handled by takeback.el: %s" method))))))

(defun takeback--dispatch-notification (conn method params)
  (pcase method
    ('window/showMessage (message "takeback: %s" (plist-get params :message)))
    ;; No request from here (this runs in the connection's process filter): `g' in
    ;; `*takeback*' lists the journal again.
    ('changes/didChange
     (takeback--reload (takeback--conn-root conn))
     (run-hook-with-args 'takeback-changed-functions (takeback--conn-root conn) (plist-get params :reason)))))

(defun takeback--ensure (root)
  "The connection of ROOT, started if need be."
  (let ((conn (gethash root takeback--connections)))
    (if (and conn (jsonrpc-running-p conn))
        conn
      (let* ((default-directory (file-name-as-directory root))
             (name (format "takeback %s" root))
             (proc (make-process :name name :command takeback-command :connection-type 'pipe
                                 :coding 'utf-8-emacs-unix :noquery t
                                 :stderr (get-buffer-create (format "*%s stderr*" name)))))
        (process-put proc 'takeback-root root)
        (setq conn (apply #'make-instance 'jsonrpc-process-connection
                          :name name :process proc
                          :request-dispatcher #'takeback--dispatch-request
                          :notification-dispatcher #'takeback--dispatch-notification
                          :on-shutdown (lambda (_) (remhash root takeback--connections))
                          ;; No events buffer (every message pretty-printed costs time), where
                          ;; this jsonrpc.el knows the option.
                          (and (slot-exists-p 'jsonrpc-connection '-events-buffer-scrollback-size)
                               '(:events-buffer-scrollback-size 0))))
        (puthash root conn takeback--connections)
        (add-hook 'after-save-hook #'takeback--after-save)
        (add-hook 'kill-buffer-hook #'takeback--kill-buffer)
        (jsonrpc-request conn :initialize
                         (list :processId (emacs-pid)
                               :clientInfo (list :name "emacs" :version emacs-version)
                               :rootUri (takeback--uri root)
                               :workspaceFolders (vector (list :uri (takeback--uri root) :name root))
                               ;; applyEdit without documentChanges: the sidecar sends plain text
                               ;; edits of files that exist and writes files to bring back or
                               ;; remove itself.
                               :capabilities (list :workspace (list :applyEdit t :workspaceEdit (list :documentChanges :json-false))))
                         :timeout takeback-request-timeout)
        (jsonrpc-notify conn :initialized (make-hash-table))
        conn))))

(defun takeback--request (root method params)
  "Send METHOD with PARAMS to ROOT's sidecar, every buffer's text first; return
the result. Signals `jsonrpc-error' with the sidecar's message when it answers
an error."
  (let ((conn (takeback--ensure root)))
    (takeback--sync-all conn)
    (jsonrpc-request conn method params :timeout takeback-request-timeout)))

(defun takeback-stop ()
  "Stop every sidecar this Emacs started."
  (interactive)
  (maphash (lambda (_ conn) (ignore-errors (jsonrpc-shutdown conn t))) takeback--connections)
  (clrhash takeback--connections))

;;;; Selectors

(defun takeback--describe-selector (sel)
  "SEL (a Selector plist) for people: \"turn 2\", \"change 3\", \"the last
change\"."
  (concat
   (cond ((plist-get sel :ids)
          (format "%s %s" (if (= (length (plist-get sel :ids)) 1) "change" "changes")
                  (mapconcat #'identity (plist-get sel :ids) ", ")))
         ((plist-get sel :turn) (format "turn %s" (plist-get sel :turn)))
         ((plist-get sel :afterTurn) (format "everything after turn %s" (plist-get sel :afterTurn)))
         (t "the last change"))
   (if (plist-get sel :paths) (concat " to " (takeback--join (append (plist-get sel :paths) nil))) "")
   (let ((l (plist-get sel :lines)))
     (cond ((null l) "")
           ((= (plist-get l :start) (plist-get l :end)) (format " at line %d" (plist-get l :start)))
           (t (format " at lines %d-%d" (plist-get l :start) (plist-get l :end)))))))

(defun takeback--join (names)
  "\"a\", \"a and b\", \"a, b and c\"."
  (if (cdr names)
      (concat (mapconcat #'identity (butlast names) ", ") " and " (car (last names)))
    (or (car names) "")))

(defun takeback--plural (n word) (format "%d %s%s" n word (if (= n 1) "" "s")))

(defun takeback--sets-phrase (sel sets)
  "\"change 3\" or \"changes 2, 3\" for SETS (ids, a list), or nil when SEL
names exactly those ids already: a message says each id once."
  (let ((sorted (lambda (ids) (sort (copy-sequence ids) (lambda (a b) (< (string-to-number a) (string-to-number b)))))))
    (unless (or (null sets)
                (equal (funcall sorted (append (plist-get sel :ids) nil)) (funcall sorted sets)))
      (format "%s %s" (if (cdr sets) "changes" "change") (mapconcat #'identity (funcall sorted sets) ", ")))))

(defun takeback--read-selector ()
  "The selector of the change at point in `*takeback*', else the last change."
  (let ((id (and (derived-mode-p 'takeback-list-mode) (tabulated-list-get-id))))
    (if id (list :ids (vector id)) (list :last t))))

;;;; M-x takeback-list

(defvar takeback-list-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'takeback-list-visit)
    (define-key map "u" #'takeback-undo)
    (define-key map "r" #'takeback-redo)
    (define-key map "p" #'takeback-preview)
    map)
  "Keys of `takeback-list-mode'.")

(define-derived-mode takeback-list-mode tabulated-list-mode "takeback"
  "The journal of an agent's changes: a row per change, newest first.
\\{takeback-list-mode-map}"
  (setq tabulated-list-format [("Change" 7 nil) ("Turn" 6 nil) ("State" 9 nil) ("Files" 40 nil) ("What" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'takeback--list-refresh nil t)
  (tabulated-list-init-header))

(defun takeback--list-entries (list)
  "The `tabulated-list-entries' of a ListResult plist: a row per change set,
newest first."
  (let ((seq (make-hash-table :test #'equal)))
    (cl-loop for turn across (plist-get list :turns)
             do (puthash (plist-get turn :id) (format "%s" (plist-get turn :seq)) seq))
    (cl-loop for set across (plist-get list :sets)
             collect (list (plist-get set :id)
                           (vector (concat "#" (plist-get set :id))
                                   (or (gethash (plist-get set :turn) seq) "")
                                   (plist-get set :state)
                                   (mapconcat #'takeback--list-file
                                              (cl-remove-if #'takeback--list-file-hidden-p (plist-get set :files))
                                              ", ")
                                   (plist-get set :label))))))

(defun takeback--list-file-hidden-p (f)
  "Non-nil for a file F of a change set that the listing leaves out: a folder made or removed
on the way (undone with its files), unless it has a capture gap (a skipped folder a command
changed: what an undo leaves is always named), and the old path of a `mv' (named with the new)."
  (or (plist-get f :renamedTo)
      (and (equal (plist-get f :type) "dir") (not (plist-get f :gap)))))

(defun takeback--list-file (f)
  "How the listing names a file F of a change set: \"a.txt +1 -1\", \"x → y (renamed)\", with
\" (not kept: REASON)\" for a capture gap."
  (concat (if (plist-get f :renamedFrom)
              (format "%s → %s (renamed)" (plist-get f :renamedFrom) (plist-get f :path))
            (format "%s +%d -%d" (plist-get f :path) (plist-get f :added) (plist-get f :removed)))
          (if (plist-get f :gap) (format " (not kept: %s)" (plist-get f :gap)) "")))

(defun takeback--list-refresh ()
  (let ((list (takeback--request takeback--list-root :changes/list (make-hash-table))))
    (setq tabulated-list-entries (takeback--list-entries list))
    (tabulated-list-print t)
    list))

(defun takeback-list ()
  "Show the journal of the current workspace in `*takeback*'. Return the
ListResult."
  (interactive)
  (let ((root (takeback--root (buffer-file-name)))
        (buf (get-buffer-create "*takeback*")))
    (with-current-buffer buf
      (takeback-list-mode)
      (setq takeback--list-root root)
      (setq default-directory (file-name-as-directory root))
      (prog1 (takeback--list-refresh)
        (when (called-interactively-p 'any) (pop-to-buffer buf))))))

(defun takeback-list-visit ()
  "Visit the first file of the change at point."
  (interactive)
  (let* ((entry (tabulated-list-get-entry))
         (files (and entry (aref entry 3))))
    (when (and files (string-match "\\`\\([^ ,]+\\) " files))
      (find-file (expand-file-name (match-string 1 files) takeback--list-root)))))

;;;; M-x takeback-preview

(defun takeback--preview-text (sel p)
  "The text of a preview buffer for the PreviewResult P of SEL."
  (let ((sets (append (plist-get p :sets) nil)))
    (with-temp-buffer
      (insert (format "# takeback: undo of %s%s\n" (takeback--describe-selector sel)
                      (if sets
                          (let ((named (takeback--sets-phrase sel sets))) (if named (concat ": " named) ""))
                        ": nothing to undo")))
      (cl-loop for f across (plist-get p :files)
               for c = (plist-get f :conflict)
               when c do (insert (format "# conflict: %s: %s\n" (plist-get f :path) (takeback--conflict-detail c))))
      (cl-loop for g across (plist-get p :gaps)
               do (insert (format "# not kept, so not put back: %s (%s)\n" (plist-get g :path) (plist-get g :reason))))
      (cl-loop for f across (plist-get p :files)
               do (cond ((plist-get f :diff) (insert (plist-get f :diff)))
                        ((plist-get f :note) (insert (format "# %s: %s\n" (plist-get f :path) (plist-get f :note))))))
      (buffer-string))))

(defvar-local takeback--preview-root nil "The workspace a `*takeback-preview*' buffer shows a step of.")
(defvar-local takeback--preview-sets nil "The change sets (ids, a vector) the preview's undo would move.")

(defvar takeback-preview-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-u") #'takeback-preview-undo-hunk)
    map)
  "Keys of `takeback-preview-mode', over `diff-mode''s own.")

(define-minor-mode takeback-preview-mode
  "A takeback preview in `diff-mode': \[takeback-preview-undo-hunk] undoes only
the hunk at point, through the file's buffer (one undo group: `undo' there
brings it back).
\{takeback-preview-mode-map}"
  :lighter " takeback")

(defun takeback--current-root ()
  "The workspace of the current buffer: the one `*takeback*' lists or the
preview shows, else the one around the file visited (or `default-directory')."
  (cond ((derived-mode-p 'takeback-list-mode) takeback--list-root)
        (takeback--preview-root takeback--preview-root)
        (t (takeback--root (buffer-file-name)))))

(defun takeback-preview (&optional selector)
  "Show what undoing SELECTOR (default: the change at point, or the last one)
would do. Return the PreviewResult. In the preview,
\<takeback-preview-mode-map>\[takeback-preview-undo-hunk] undoes only the
hunk at point."
  (interactive)
  (let* ((root (takeback--current-root))
         (sel (or selector (takeback--read-selector)))
         (p (takeback--request root :undo/preview (list :selector sel :direction "undo")))
         (buf (get-buffer-create "*takeback-preview*")))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (takeback--preview-text sel p)))
      (diff-mode)
      (takeback-preview-mode 1)
      (setq takeback--preview-root root)
      (setq takeback--preview-sets (plist-get p :sets))
      (setq default-directory (file-name-as-directory root))
      (setq buffer-read-only t)
      (goto-char (point-min)))
    (when (called-interactively-p 'any) (display-buffer buf))
    p))

(defun takeback--preview-hunk-at-point ()
  "The hunk of the preview at point: (PATH START END), PATH its file's
workspace path and START..END the lines of the file now that the hunk changes
(for a hunk that only adds lines, the line before which they go, both). Nil
when point is on no hunk."
  (save-excursion
    (let ((here (line-beginning-position)))
      (end-of-line)
      (when (re-search-backward "^@@ -\\([0-9]+\\)\\(?:,\\([0-9]+\\)\\)? \\+[0-9]+\\(?:,\\([0-9]+\\)\\)? @@" nil t)
        (let* ((old (if (match-beginning 2) (string-to-number (match-string 2)) 1))
               (new (if (match-beginning 3) (string-to-number (match-string 3)) 1))
               ;; A side with no line names the line before the hunk (as unified diffs do).
               (line (+ (string-to-number (match-string 1)) (if (= old 0) 1 0)))
               ;; The file's header above it: `+++ /dev/null' for a file the step removes.
               (path (save-excursion
                       (and (re-search-backward "^\\+\\+\\+ \\(?:b/\\(.*\\)\\|.*\\)$" nil t) (match-string-no-properties 1))))
               start end insert)
          (forward-line 1)
          ;; The hunk's lines, as many as its header counts on each side.
          (while (and (not (eobp)) (or (> old 0) (> new 0) (eq (char-after) ?\\)))
            (pcase (char-after)
              (?- (setq start (or start line) end line line (1+ line) old (1- old)))
              (?+ (setq insert (or insert line) new (1- new)))
              (?\\ nil)
              (_ (setq line (1+ line) old (1- old) new (1- new))))
            (forward-line 1))
          ;; Point is on the hunk: its header or one of its lines.
          (when (and path (or start insert) (> (point) here))
            (list path (or start insert) (or end insert))))))))

(defun takeback-preview-undo-hunk (&optional force)
  "Undo only the hunk at point of the preview: the hunks of the previewed
changes that it touches, through the file's buffer (one undo group, so `undo'
there brings it back), saved as the agent saved. With a prefix argument
(FORCE), replace later changes. Then show the preview again. Return the
ApplyResult."
  (interactive "P")
  (let ((hunk (takeback--preview-hunk-at-point))
        (sets takeback--preview-sets)
        (line (line-number-at-pos)))
    (cond
     ((null hunk) (user-error "takeback: no hunk of a file's lines at point (a file made or removed whole has none)"))
     ((zerop (length sets)) (user-error "takeback: the preview has nothing to undo"))
     (t
      (let ((r (takeback--run "undo" (list :ids sets :paths (vector (nth 0 hunk))
                                           :lines (list :start (nth 1 hunk) :end (nth 2 hunk)))
                              force)))
        (takeback-preview (list :ids sets))
        (goto-char (point-min))
        (forward-line (1- line))
        r)))))

;;;; M-x takeback-undo / takeback-redo

(defconst takeback--action-words
  '(("remove" . "removed") ("bring-back" . "brought back") ("restore-mode" . "mode restored")
    ("restore-link" . "link restored") ("none" . "already in place")))

(defun takeback--files-phrase (applied)
  "\"notes.md, src/new.ts (removed) and f.txt\", leaving out folders that come
and go with their files."
  (takeback--join
   (cl-loop for a in applied
            for path = (plist-get a :path)
            unless (cl-some (lambda (o) (string-prefix-p (concat path "/") (plist-get o :path))) applied)
            collect (let ((w (cdr (assoc (plist-get a :action) takeback--action-words))))
                      (if w (format "%s (%s)" path w) path)))))

(defun takeback--undo-hint (c)
  "The undo that takes the later changes of the conflict C back too, as this
package runs it: \"M-: (takeback-undo \\='(:ids [\"2\" \"5\"])) takes both back\",
from the ids the sidecar gives in :combined; nil when there are none."
  (let ((ids (append (plist-get c :combined) nil)))
    (when ids
      (format "M-: (takeback-undo '(:ids [%s])) takes %s back"
              (mapconcat (lambda (id) (format "%S" id)) ids " ")
              (if (= (length ids) 2) "both" "them all")))))

(defun takeback--conflict-detail (c)
  "The conflict C in words: its detail (\"changed since by #5 (prettier, turn 3):
line 8 ...\", \"unsaved in Emacs\"), which begins with its reason (the reason
alone when the detail is empty), then the undo that takes the later changes back
too, when there is one."
  (let* ((detail (plist-get c :detail))
         (text (if (and (stringp detail) (not (equal detail "")))
                   detail
                 (replace-regexp-in-string "-" " " (plist-get c :reason))))
         (hint (takeback--undo-hint c)))
    (if hint (concat text " — " hint) text)))

(defun takeback--describe (sel r unwritten)
  "The message for the ApplyResult R of SEL; UNWRITTEN names buffers that could
not be saved."
  (let* ((direction (plist-get r :direction))
         (what (takeback--describe-selector sel))
         (conflicts (append (plist-get r :conflicts) nil))
         (applied (append (plist-get r :applied) nil))
         (failed (append (plist-get r :failed) nil))
         (parts nil))
    (cond
     (failed
      (push (format "could not %s %s: %s; nothing was recorded or saved" direction what
                    (takeback--join (mapcar (lambda (x) (format "%s (%s)" (plist-get x :path) (plist-get x :reason))) failed)))
            parts))
     ((and (not (eq (plist-get r :written) t)) conflicts)
      ;; As git refuses: what did not happen, each file with its reason once and who
      ;; changed it (the detail), then what to do.
      (push (format "nothing %s for %s: %s. C-u M-x takeback-%s replaces later changes"
                    (if (equal direction "redo") "redone" "undone") what
                    (mapconcat (lambda (x) (format "%s %s" (plist-get x :path) (takeback--conflict-detail x)))
                               conflicts "; ")
                    direction)
            parts))
     ((or applied (> (length (plist-get r :sets)) 0))
      (let ((sets (takeback--sets-phrase sel (append (plist-get r :sets) nil))))
        (push (format "%s %s%s: %s" (if (equal direction "redo") "redid" "undid") what
                      (if sets (format " (%s)" sets) "")
                      (takeback--files-phrase applied))
              parts))
      (when (and (eq (plist-get r :forced) t) conflicts)
        (push (concat "replaced later changes in " (takeback--join (mapcar (lambda (x) (plist-get x :path)) conflicts))) parts)))
     (t (push (format "nothing to %s for %s" direction what) parts)))
    (let ((gaps (append (plist-get r :gaps) nil)))
      (when gaps
        (push (concat "not kept, so not put back: "
                      (takeback--join (mapcar (lambda (g) (format "%s (%s)" (plist-get g :path) (plist-get g :reason))) gaps)))
              parts)))
    (setq parts (append (reverse parts) (append (plist-get r :notes) nil)))
    (when unwritten (setq parts (append parts (list (concat "could not write " (takeback--join unwritten))))))
    (mapconcat #'identity parts "; ")))

(defun takeback--unsaved-buffers (root)
  "The buffers of ROOT's files that hold unsaved text: the person's work."
  (cl-remove-if-not (lambda (b)
                      (let ((file (takeback--buffer-file b)))
                        (and file (takeback--relative root file) (buffer-modified-p b))))
                    (buffer-list)))

(defun takeback--merged-into-unsaved (root r unsaved)
  "The paths of R's applied files changed through the editor in a buffer of
UNSAVED (the buffers that held unsaved text before the step) that the step did
not replace (not a conflict it forced): the sidecar merged the step into that
text, and the buffer is the person's to save. Sorted."
  (let ((forced (mapcar (lambda (c) (plist-get c :path)) (append (plist-get r :conflicts) nil)))
        out)
    (cl-loop for a across (plist-get r :applied)
             for b = (and (equal (plist-get a :via) "editor")
                          (takeback--file-buffer (expand-file-name (plist-get a :path) root)))
             when (and b (memq b unsaved) (not (member (plist-get a :path) forced)))
             do (push (plist-get a :path) out))
    (sort out #'string<)))

(defun takeback--save-buffers (root r &optional keep)
  "Save the buffers the sidecar changed through the editor, as the agent saved
its files: without save hooks (a format-on-save would change the bytes the undo
puts back) and without adding a final newline or a backup file; but not those
of the paths KEEP (merged into the person's unsaved text). Return the paths
not saved, with the reason."
  (let (failed)
    (cl-loop for a across (plist-get r :applied)
             for file = (expand-file-name (plist-get a :path) root)
             for b = (and (equal (plist-get a :via) "editor") (not (member (plist-get a :path) keep))
                          (takeback--file-buffer file))
             when (and b (buffer-modified-p b))
             do (condition-case err
                    (with-current-buffer b
                      (make-directory (file-name-directory file) t)
                      ;; No backup file either: the agent's write made none.
                      (let ((before-save-hook nil) (after-save-hook nil) (write-contents-functions nil)
                            (require-final-newline nil) (mode-require-final-newline nil)
                            (make-backup-files nil) (inhibit-message t))
                        (save-buffer))
                      (takeback--after-save))
                  (error (push (format "%s (%s)" (plist-get a :path) (error-message-string err)) failed))))
    (nreverse failed)))

(defun takeback--holds-file-p (buffer file)
  "Whether BUFFER's text, encoded as its file is, is the bytes of FILE."
  (with-current-buffer buffer
    (let ((bytes (encode-coding-string (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))
                                       buffer-file-coding-system t)))
      (with-temp-buffer
        (set-buffer-multibyte nil)
        (insert-file-contents-literally file)
        (string= (buffer-string) bytes)))))

(defun takeback--sync-disk-buffers (root r)
  "Bring buffers in line with what the sidecar wrote on disk itself: reverted,
or killed when their file is gone. A modified buffer is left alone unless it
holds the very bytes written (the step's text typed, or brought back by `undo',
before it): then it is reverted too, which loses nothing, so that it is not
left modified and Emacs does not take its file for one changed behind its back
at the next edit or save."
  (cl-loop for a across (plist-get r :applied)
           for file = (expand-file-name (plist-get a :path) root)
           for b = (and (not (equal (plist-get a :via) "editor")) (takeback--file-buffer file))
           when (and b (or (not (buffer-modified-p b))
                           (and (file-regular-p file) (takeback--holds-file-p b file))))
           do (if (file-exists-p file)
                  (takeback--revert b)
                (when (equal (plist-get a :action) "remove") (kill-buffer b)))))

(defun takeback--run (direction selector force)
  (let* ((root (takeback--current-root))
         (sel (or selector (takeback--read-selector)))
         r err unsaved)
    (takeback--reload root)
    (setq unsaved (takeback--unsaved-buffers root))
    (condition-case e
        (setq r (takeback--request root :undo/apply (list :selector sel :direction direction :force (if force t :json-false))))
      (jsonrpc-error (setq err (or (alist-get 'jsonrpc-error-message (cdr e)) (format "%S" e)))))
    (if err
        (message "takeback: %s" err)
      (let* ((landed (and (eq (plist-get r :written) t) (null (append (plist-get r :failed) nil))))
             (keep (and landed (takeback--merged-into-unsaved root r unsaved)))
             (unwritten (and landed (prog1 (takeback--save-buffers root r keep) (takeback--sync-disk-buffers root r)))))
        (when keep
          (setq r (plist-put r :notes (vconcat (plist-get r :notes)
                                               (list (format "%s in the buffer, keeping your unsaved changes: C-x C-s %s to finish"
                                                             (if (equal direction "undo") "put back" "made again")
                                                             (takeback--join keep)))))))
        (message "takeback: %s" (takeback--describe sel r unwritten))))
    ;; The listing shows the step.
    (let ((b (get-buffer "*takeback*")))
      (when (and b (equal (buffer-local-value 'takeback--list-root b) root))
        (with-current-buffer b (ignore-errors (takeback--list-refresh)))))
    (run-hook-with-args 'takeback-applied-hook (list :direction direction :selector sel :result r :error err :root root))
    r))

(defun takeback-undo (&optional selector force)
  "Undo SELECTOR (default: the change at point in `*takeback*', else the last
change). With a prefix argument (FORCE), replace later changes and unsaved
text. Return the ApplyResult."
  (interactive (list nil current-prefix-arg))
  (takeback--run "undo" selector force))

(defun takeback--touches (span start end)
  "Whether the LineSpan SPAN (a plist :start :lines) of the file now touches
lines START..END: they share a line, or, for a span of no line (lines the
agent took out, put back just before its start), START..END holds the line
before it or the line after it."
  (let ((s (plist-get span :start)) (n (plist-get span :lines)))
    (if (> n 0)
        (and (<= start (+ s n -1)) (>= end s))
      (and (<= start s) (>= end (1- s))))))

(defun takeback--hunk-selector (root rel start end)
  "The selector of the agent's hunks at lines START..END of ROOT's file REL as
its buffer has it now: the newest change still in place (in part or whole)
with a hunk there, narrowed to the file and those lines; nil when there is
none."
  (let ((list (takeback--request root :changes/list (list :hunks rel))))
    (cl-loop for set across (plist-get list :sets)
             when (member (plist-get set :state) '("applied" "partial"))
             when (cl-loop for f across (plist-get set :files)
                           thereis (and (equal (plist-get f :path) rel)
                                        (cl-loop for h across (or (plist-get f :hunks) [])
                                                 for now = (plist-get h :now)
                                                 thereis (and now (takeback--touches now start end)))))
             return (list :ids (vector (plist-get set :id)) :paths (vector rel)
                          :lines (list :start start :end end)))))

(defun takeback-undo-hunk (&optional force)
  "Undo only the agent's hunk under point (with an active region, the hunks
its lines touch) in the current file, as the buffer has it now: of the newest
change still in place that has one there. It arrives as an edit of the
buffer, one undo group (`undo' brings the hunk back), saved as the agent
saved. With a prefix argument (FORCE), replace later changes. Return the
ApplyResult, or nil when no hunk of the agent's is there."
  (interactive "P")
  (let* ((file (or (takeback--buffer-file (current-buffer)) (user-error "takeback: this buffer visits no file")))
         (root (takeback--root file))
         (rel (or (takeback--relative root file) (user-error "takeback: %s is not in the workspace %s" file root)))
         (start (line-number-at-pos (if (use-region-p) (region-beginning) (point))))
         (end (if (use-region-p)
                  (line-number-at-pos (max (region-beginning) (1- (region-end))))
                start))
         (sel (takeback--hunk-selector root rel start end)))
    (if sel
        (takeback--run "undo" sel force)
      ;; Through "%s": `message' would turn the apostrophe into a curved one.
      (message "%s" (format "takeback: no change of the agent's is at %s of %s"
                            (if (= start end) (format "line %d" start) (format "lines %d-%d" start end)) rel))
      nil)))

(defun takeback-redo (&optional selector force)
  "Redo SELECTOR (default: the change at point in `*takeback*', else the last
undone one). With a prefix argument (FORCE), replace later changes. Return the
ApplyResult."
  (interactive (list nil current-prefix-arg))
  (takeback--run "redo" selector force))

(provide 'takeback)
;;; takeback.el ends here
