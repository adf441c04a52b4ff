// esbuild plugin: inside the openai SDK's request path, `Headers`, `FormData` and `ReadableStream` resolve to the
// light stand-ins of src/providers/sdk-web-globals.ts instead of Node's globals, whose first touch
// loads all of undici (pipe mode sends through httpFetch and never needs it). Other packages and
// the SDK's upload helpers keep the real globals.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIM = join(dirname(fileURLToPath(import.meta.url)), '..', 'src/providers/sdk-web-globals.ts');
// The files that construct or test for Headers/FormData on every request.
const FILES =
  /[\\/]node_modules[\\/]openai[\\/](client|internal[\\/]headers|internal[\\/]utils[\\/]log)\.mjs$/;

export const openaiGlobals = {
  name: 'openai-web-globals',
  setup(build) {
    let patched = 0;
    build.onStart(() => {
      patched = 0;
    });
    build.onLoad({ filter: FILES }, async (args) => {
      patched += 1;
      // client.mjs tests bodies with `globalThis.ReadableStream`, which loads Node's web streams.
      const source = (await readFile(args.path, 'utf8')).replaceAll(
        'globalThis.ReadableStream',
        'ReadableStream',
      );
      return {
        contents: `import { Headers, FormData, ReadableStream } from ${JSON.stringify(SHIM)};\n${source}`,
        loader: 'js',
        resolveDir: dirname(args.path),
      };
    });
    build.onEnd((result) => {
      // A new SDK layout (e.g. CJS files) would silently bring undici back: fail the build instead.
      const bundlesOpenai = Object.keys(result.metafile?.inputs ?? {}).some((input) =>
        input.includes('node_modules/openai/'),
      );
      if (bundlesOpenai && patched === 0) {
        return {
          errors: [
            {
              text: 'openai-web-globals: no openai SDK file matched; update scripts/esbuild-openai-globals.mjs',
            },
          ],
        };
      }
      return undefined;
    });
  },
};
