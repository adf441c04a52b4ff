// Opens a URL in the user's browser when there is one: $BROWSER, else xdg-open under a graphical
// session (open on macOS). The caller always prints the URL too, for terminals without a browser.
import { spawn } from 'node:child_process';

/** The command that would open `url`, or undefined when this session has no browser to offer. */
export function browserCommand(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): string[] | undefined {
  const browser = env.BROWSER?.split(':')[0]?.trim();
  if (browser) return [browser];
  if (platform === 'darwin') return ['open'];
  if (platform === 'linux' && (env.DISPLAY || env.WAYLAND_DISPLAY)) return ['xdg-open'];
  return undefined;
}

/** Starts the browser, detached and silent; false when there is none or it could not start. */
export function openBrowser(url: string, env: NodeJS.ProcessEnv): boolean {
  if (!/^https?:\/\//i.test(url)) return false;
  const command = browserCommand(env);
  if (!command) return false;
  try {
    const child = spawn(command[0] as string, [...command.slice(1), url], {
      detached: true,
      stdio: 'ignore',
      env,
    });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
