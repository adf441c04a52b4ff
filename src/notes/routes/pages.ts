// HTML: the app and its embedded assets, and the public pages (public notes' public files only,
// even for logged-in admins), whose data travels as inert JSON in the page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AssetMissingError, readAsset, readAssetText } from '../../core/assets.ts';
import { type FileRow, type NoteRow, toFile, toNote } from '../db.ts';
import { contentTypeFor, lookupName, notFound } from '../http.ts';
import { sendRendered } from '../read-cache.ts';
import type { Params } from './kit.ts';

export async function pageRoutes(app: FastifyInstance): Promise<void> {
  const { store, collab, readCache: cache } = app.notes;

  const assetCache = new Map<string, Buffer | null>();
  const asset = (path: string): Buffer | null => {
    if (!assetCache.has(path)) {
      try {
        assetCache.set(path, Buffer.from(readAsset(`web/${path}`)));
      } catch (error) {
        if (!(error instanceof AssetMissingError)) throw error;
        assetCache.set(path, null);
      }
    }
    return assetCache.get(path) ?? null;
  };
  const sendAsset = (reply: FastifyReply, path: string) => {
    const bytes = asset(path);
    if (!bytes) throw notFound(`/${path}`);
    return reply.header('Content-Type', contentTypeFor(path)).header('Cache-Control', 'no-cache').send(bytes);
  };
  let template: string | null = null;
  const page = (data: unknown): string => {
    if (template === null) {
      try {
        template = readAssetText('web/public.html');
      } catch {
        throw notFound('the public page template (web/public.html)');
      }
    }
    const json = JSON.stringify(data)
      .replace(/</g, '\\u003c')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029');
    const tag = `<script type="application/json" id="rune-data">${json}</script>`;
    return template.replace('<!--RUNE_DATA-->', () => tag);
  };
  const publicNote = (ref: string): NoteRow => {
    const note = store.findNote(lookupName(ref));
    if (note?.public !== 1 || /^\d+$/.test(ref)) throw notFound(`note '${ref}'`);
    return note;
  };
  const publicFile = (note: NoteRow, ref: string): FileRow => {
    const file = store.findFile(note.id, lookupName(ref));
    if (file?.public !== 1 || /^\d+$/.test(ref)) throw notFound(`file '${ref}'`);
    return file;
  };
  /**
   * A public answer from the cache while what it shows is unchanged, else rendered (by `render`,
   * which names the note it read) and kept.
   */
  const cached = (
    req: FastifyRequest,
    reply: FastifyReply,
    key: string,
    type: string,
    render: () => { noteId: number | null; body: string },
  ) => {
    let rendered = cache.get(key);
    if (!rendered) {
      const { noteId, body } = render();
      rendered = cache.put(key, noteId, type, body);
    }
    return sendRendered(req, reply, rendered);
  };
  const HTML = 'text/html; charset=utf-8';

  app.get('/', (_req, reply) => sendAsset(reply, 'index.html'));
  app.get<Params<'*'>>('/assets/*', (req, reply) => {
    const path = req.params['*'];
    if (!path || path.split('/').some((part) => part === '..' || part === '' || part.startsWith('.'))) {
      throw notFound('asset');
    }
    return sendAsset(reply, path);
  });
  app.get('/notes', (_req, reply) => reply.redirect('/notes/', 301));
  app.get('/notes/', (req, reply) =>
    cached(req, reply, 'index', HTML, () => ({
      noteId: null,
      body: page({ kind: 'index', notes: store.listNotes({ publicOnly: true, deleted: false }).map(toNote) }),
    })),
  );
  app.get<Params<'note'>>('/notes/:note/', (req, reply) =>
    cached(req, reply, `note\0${req.params.note}`, HTML, () => {
      const note = publicNote(req.params.note);
      const files = store.listFiles(note.id, { publicOnly: true, deleted: false }).map((f) => toFile(f));
      return { noteId: note.id, body: page({ kind: 'note', note: toNote(note), files }) };
    }),
  );
  app.get<Params<'note'>>('/notes/:note', (req, reply) => {
    const note = publicNote(req.params.note);
    return reply.redirect(`/notes/${encodeURIComponent(note.name)}/`, 301);
  });
  app.get<Params<'note' | 'file'>>('/notes/:note/:file', (req, reply) =>
    cached(req, reply, `file\0${req.params.note}\0${req.params.file}`, HTML, () => {
      const note = publicNote(req.params.note);
      const file = publicFile(note, req.params.file);
      const data = {
        kind: 'file',
        note: toNote(note),
        file: { ...toFile(file), content: collab.text(file) },
      };
      return { noteId: note.id, body: page(data) };
    }),
  );
  app.get<Params<'note' | 'file'>>('/raw/:note/:file', (req, reply) =>
    cached(req, reply, `raw\0${req.params.note}\0${req.params.file}`, 'text/plain; charset=utf-8', () => {
      const note = publicNote(req.params.note);
      return { noteId: note.id, body: collab.text(publicFile(note, req.params.file)) };
    }),
  );
}
