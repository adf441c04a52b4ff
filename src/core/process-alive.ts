// Whether a process still exists, as signal 0 tells: EPERM means it does, but belongs to someone else.
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
