// Marks the page as having JavaScript before it is drawn, so that .js-only and .nojs-only show the right
// parts at once. A file, not an inline script: the Content-Security-Policy allows scripts from the site only.
document.documentElement.classList.replace("no-js", "js");
