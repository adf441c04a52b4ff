// The one module through which rune's own code (outside the sandbox) touches a path that a tool, a
// sandboxed command or a Concourse input could have changed: a writable grant, a Concourse folder,
// a tool's argument (docs/adr/0034-descriptor-file-operations.md). Everything is resolved from a
// folder held by descriptor (`Root`), through no symbolic link (openat2 RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS, or an O_NOFOLLOW walk), with O_NONBLOCK so a FIFO cannot block, and only a
// regular file or a folder is acted on. Refusals are `PathRefused` errors that name the path and why.
//
//   const root = Root.open('/work/proj');                 // from '/', through no link
//   root.readFile('src/a.ts').bytes                       // a regular file, or PathRefused
//   replaceFile(root, 'src/a.ts', text)                    // temp + fsync + renameat in the folder
//   createFile(root, 'new.txt', text)                      // O_EXCL: never through a dangling link
//   root.list('src'); root.stat('src/a.ts')                // lstat: a link is reported, not followed
//   renameWithin(root, 'a', 'a.rune-rejected', { noReplace: true })
//   removeTree(root, 'tmp')                                // no link followed, no mount crossed
//   removeFolderAt('/tmp/rune-call-x')                     // the same, for a folder rune made
//   const grants = new Grants(); grants.pinAll(paths);     // once per run; later uses are checked
//   const { root, rel } = grants.locate(realPath);         // the pinned folder that holds a path
export {
  changeMode,
  createFile,
  makeFolder,
  type ReplaceOptions,
  removeEntry,
  removeFolderAt,
  removeTree,
  renameWithin,
  replaceFile,
} from './change.ts';
export { Grants, type Located } from './grants.ts';
export {
  isPathRefused,
  kindRefused,
  kindWords,
  linkRefused,
  movedRefused,
  PathRefused,
  type RefusalReason,
} from './refused.ts';
export { type OpenFile, parts, Root, readAll } from './root.ts';
export {
  type Entry,
  type Kind,
  type Listed,
  RENAME_EXCHANGE,
  RENAME_NOREPLACE,
  useResolution,
} from './sys.ts';
