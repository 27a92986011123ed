// Keys on the adjudication page: 1, 2 (or t for a tie) choose the final answer and put the cursor in the reason.
document.addEventListener("keydown", (event) => {
  const form = document.getElementById("final-answer");
  const typing = ["TEXTAREA", "INPUT", "SELECT"].includes(event.target.tagName) && event.target.type !== "radio";
  if (!form || typing || event.ctrlKey || event.metaKey || event.altKey) return;
  const value = { 1: "1", 2: "2", t: "tie" }[event.key];
  const choice = value && form.querySelector(`input[name="position"][value="${value}"]`);
  if (!choice) return;
  event.preventDefault();
  choice.checked = true;
  document.getElementById("reason").focus();
});
