import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (scripts/install-browser.sh), headless, kept off the network it cannot reach. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
