document.getElementById("lib").textContent = "loaded from the plain file";
