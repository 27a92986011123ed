// Upload forms: a progress bar while the file travels (htmx's upload events), then a note while the
// server imports it; the bar hides again when the answer is in. Without JavaScript the form posts as usual.
document.addEventListener("htmx:xhr:loadstart", (event) => {
  const box = event.target.querySelector && event.target.querySelector(".upload-progress");
  if (!box) return;
  box.hidden = false;
  box.querySelector("progress").value = 0;
  box.querySelector(".upload-state").textContent = "Sending…";
});
document.addEventListener("htmx:xhr:progress", (event) => {
  const box = event.target.querySelector && event.target.querySelector(".upload-progress");
  if (!box || !event.detail.lengthComputable) return;
  const percent = Math.round((event.detail.loaded / event.detail.total) * 100);
  box.querySelector("progress").value = percent;
  box.querySelector(".upload-state").textContent =
    percent < 100 ? `Sending… ${percent}%` : "Sent. Reading, cleaning and importing on the server…";
});
document.addEventListener("htmx:afterRequest", (event) => {
  const box = event.target.querySelector && event.target.querySelector(".upload-progress");
  if (box) box.hidden = true;
});
