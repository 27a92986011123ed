// The guess question's keys (annotate/guess.html): 1, 2 and 0 press the answer's button, n the
// "Next pair" button. Kept apart from annotate.js: this page holds nothing else.
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
  if (event.target instanceof HTMLElement && event.target.closest("input, textarea, select, [contenteditable]")) return;
  const answer = document.querySelector(`#guess button[data-key="${event.key}"]:not([disabled])`);
  const button = answer || (event.key === "n" ? document.querySelector("#guess-next button[type=submit]") : null);
  if (!button) return;
  event.preventDefault();
  button.click();
});
